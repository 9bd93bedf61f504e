//go:build stress

package daemon_test

// The full crash storm: go test -tags stress ./daemon, or bench/crash.sh.
const (
	stormTasks = 1000
	stormKills = 20
)
