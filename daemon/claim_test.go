package daemon_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestClaim_BeforeStart: an agent starts only once its task file says it
// runs: the agent's own copy of its file, taken the moment it starts, is
// in_progress, running, with its attempt and start time.
func TestClaim_BeforeStart(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	out := filepath.Join(t.TempDir(), "1.json") // named as the task, for ReadFile
	h.drop("l", "1", execTask("short", `cat "$TASKD_TASK_FILE" > `+out))
	h.waitState("l", "1", task.Succeeded, 10*time.Second)

	seen, err := taskfile.ReadFile(out)
	if err != nil {
		t.Fatalf("the agent's copy of its task file: %v", err)
	}
	m := seen.Metadata.Object("taskd")
	attempt, _ := m.Int("attempt")
	startedAt, _ := m.String("startedAt")
	if got, want := seen.Status, taskfile.StatusInProgress; got != want {
		t.Errorf("status the agent saw = %q, want %q", got, want)
	}
	if got, want := stateOf(seen), task.Running; got != want {
		t.Errorf("state the agent saw = %q, want %q", got, want)
	}
	if attempt != 1 || startedAt == "" {
		t.Errorf("the agent saw attempt %d, startedAt %q; want 1 and a time", attempt, startedAt)
	}
}
