//go:build !stress

package daemon_test

// The short crash storm of the default test run (and CI).
const (
	stormTasks = 100
	stormKills = 3
)

// Tasks run while two other writers rewrite their files (TestConcurrentWriters).
const writersTasks = 60
