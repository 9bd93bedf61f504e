//go:build stress

package daemon_test

import "time"

// The full crash storm: go test -tags stress ./daemon, or bench/crash.sh.
const (
	stormTasks = 1000
	stormKills = 20
)

// Tasks run while two other writers rewrite their files (TestConcurrentWriters).
const writersTasks = 500

// How long Claude Code's lock is held in TestTrust_ClaudeCodeLockHeld.
const lockHold = 30 * time.Second
