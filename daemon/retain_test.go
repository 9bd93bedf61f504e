package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
)

// A restart does not log TaskAccepted again for a task an earlier daemon
// accepted (a task still pending, its blocker not done); a new task is
// accepted once.
func TestRestart_AcceptedOnce(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	// 1 waits for 2, which is Claude Code's own task, never done.
	h.drop("l", "2", `{"subject":"a person's task","status":"pending"}`)
	h.drop("l", "1", execTask("blocked", "true", "blockedBy", `["2"]`))
	h.waitEvents("l", eventlog.TaskAccepted, "1", 1)
	for range 2 {
		h.stop()
		h.start()
	}
	h.drop("l", "3", execTask("new", "true"))
	h.waitState("l", "3", task.Succeeded, 10*time.Second)
	evs := h.events("l")
	if got := countEvents(evs, eventlog.DaemonStarted, ""); got != 3 {
		t.Fatalf("%d DaemonStarted events, want 3", got)
	}
	for _, id := range []string{"1", "3"} {
		if got := countEvents(evs, eventlog.TaskAccepted, id); got != 1 {
			t.Errorf("task %s: %d TaskAccepted events, want 1", id, got)
		}
	}
}

// At start the daemon applies the retention policy: the run folder of an
// ended task untouched for longer than maxAge goes, the folder of a
// pending task as old stays; the event log rotates at its limit.
func TestRetention_AtStart(t *testing.T) {
	t.Parallel()
	one := 1
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Retention = &config.RetentionSpec{MaxAge: "1d", EventsMaxMiB: &one, EventsKeep: &one}
	})
	h.drop("l", "done", execTask("done", "true"))
	h.waitState("l", "done", task.Succeeded, 10*time.Second)
	h.drop("l", "held", execTask("held", "true", "blockedBy", `["nobody"]`, "taskd.attempt", "1"))
	h.waitEvents("l", eventlog.TaskAccepted, "done", 1)
	h.stop()

	list := h.listDir("l")
	heldRun := filepath.Join(list, ".taskd", "runs", "held", "1")
	if err := os.MkdirAll(heldRun, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	for _, dir := range []string{filepath.Join(list, ".taskd", "runs", "done"), heldRun} {
		filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
	}
	// An event log past its limit.
	big := strings.Repeat(`{"ts":"2026-01-01T00:00:00Z","type":"Filler","list":"l"}`+"\n", (1<<20)/56+1)
	if err := os.WriteFile(filepath.Join(list, ".taskd", "events.jsonl"), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}

	h.start()
	h.waitFor("the ended task's run folder removed", 10*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(list, ".taskd", "runs", "done", "1"))
		return os.IsNotExist(err)
	})
	if _, err := os.Stat(heldRun); err != nil {
		t.Errorf("the pending task's run folder: %v, want it kept", err)
	}
	if _, err := os.Stat(filepath.Join(list, "done.json")); err != nil {
		t.Errorf("the task file: %v, want it kept", err)
	}
	if got := eventlog.Files(list); len(got) != 2 {
		t.Errorf("event log files %v, want the log and one rotated file", got)
	}
}
