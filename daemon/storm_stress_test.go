//go:build stress

package daemon_test

// The full crash storm: go test -tags stress ./daemon, or bench/crash.sh.
const (
	stormTasks = 1000
	stormKills = 20
)

// Tasks run while two other writers rewrite their files (TestConcurrentWriters).
const writersTasks = 500
