//go:build !stress

package daemon_test

import "time"

// The short crash storm of the default test run (and CI).
const (
	stormTasks = 100
	stormKills = 3
)

// Tasks run while two other writers rewrite their files (TestConcurrentWriters).
const writersTasks = 60

// How long Claude Code's lock is held in TestTrust_ClaudeCodeLockHeld:
// beyond the 10 s after which a lock that is not refreshed counts as
// abandoned, so two refreshes happen (30 s with the stress tag).
const lockHold = 12 * time.Second
