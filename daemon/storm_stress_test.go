//go:build stress

package daemon_test

// The full crash storm: go test -tags stress ./daemon, or bench/crash.sh
// (which runs it twice: with these kills, and with none to compare).
const (
	stormTasks = 1000
	stormKills = 30
)

// Tasks run while two other writers rewrite their files (TestConcurrentWriters).
const writersTasks = 500
