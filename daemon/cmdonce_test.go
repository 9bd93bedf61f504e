package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/proc"
)

// TestDaemon_SIGKILLAroundTheOneCmdJSON kills the daemon (a process of its
// own) twice around the start of an attempt prepared ahead of its slot,
// which, where attempts get cgroups, leaves no cmd.json until its agent
// has started: while the attempt only waits for its slot (the next
// daemon takes the claim back, and the task runs as attempt 1, once), and
// once its agent runs (the next daemon kills it and records the attempt
// interrupted: attempt 2 runs).
func TestDaemon_SIGKILLAroundTheOneCmdJSON(t *testing.T) {
	t.Parallel()
	root := newRoot(t, "l")
	h := &harness{t: t, root: root, logs: &syncBuffer{}}
	marks := t.TempDir()
	wait, open := gate(t)
	p1 := startDaemonProc(t, root, 1)
	h.drop("l", "1", execTask("holds the slot", "echo $TASKD_ATTEMPT >> "+marks+"/1; "+wait))
	h.waitFor("task 1's agent", 20*time.Second, func() bool { return readString(marks, "1") == "1\n" })
	h.drop("l", "2", execTask("runs until killed the first time", `echo $TASKD_ATTEMPT >> `+marks+`/2; if [ "$TASKD_ATTEMPT" = 1 ]; then while :; do sleep 0.1; done; fi`))
	h.waitPrepared("l", "2")
	h.waitState("l", "2", task.Starting, 10*time.Second)
	cgroups := proc.Supervise().Mode() == proc.ByCgroup
	cmdPath := filepath.Join(h.runDir("l", "2"), "cmd.json")
	if _, err := os.Stat(cmdPath); cgroups && !os.IsNotExist(err) {
		t.Errorf("task 2 waits for its slot with a cmd.json (%v)", err)
	}
	p1.kill(t)

	// Task 1 was interrupted: attempt 2 runs, held at the gate. Task 2's
	// claim is taken back, its agent never ran: it is prepared again, as
	// attempt 1, and gets the slot when task 1 ends, to run until killed
	// — most often before it is marked running (that takes up to 250 ms),
	// which its cgroup tells the next daemon it went on to start.
	if got := readString(marks, "2"); got != "" {
		t.Fatalf("task 2's agent ran (%q) while it waited for its slot", got)
	}
	// (Should task 2 get the slot first, it is claimed running at once,
	// and killed so: the outcome is the same.)
	p2 := startDaemonProc(t, root, 1)
	h.waitFor("task 1's second agent or task 2's", 20*time.Second, func() bool {
		return readString(marks, "1") == "1\n2\n" || readString(marks, "2") == "1\n"
	})
	if readString(marks, "2") == "" {
		h.waitPrepared("l", "2")
		open()
		h.waitFor("task 2's agent", 20*time.Second, func() bool { return readString(marks, "2") == "1\n" })
	}
	p2.kill(t)
	open()
	t.Logf("task 2 when the daemon was killed, its agent running: %s", task.Of(h.read("l", "2")))

	p3 := startDaemonProc(t, root, 1)
	tf := h.waitState("l", "2", task.Succeeded, 30*time.Second)
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	p3.term(t)
	if got := readString(marks, "2"); got != "1\n2\n" {
		t.Errorf("task 2 ran attempts %q, want 1 and 2", got)
	}
	if got, _ := tf.Metadata.Object("taskd").Int("attempt"); got != 2 {
		t.Errorf("task 2 ended with attempt %d, want 2", got)
	}
	evs := h.events("l")
	if got := countEvents(evs, eventlog.TaskInterrupted, "2"); got != 1 {
		t.Errorf("task 2 interrupted %d times, want once (its agent ran when the second daemon died)", got)
	}
	// (Task 1 may have been interrupted again, its end not yet recorded
	// when its slot went to task 2.)
	if got := readString(marks, "1"); !strings.HasPrefix(got, "1\n2\n") {
		t.Errorf("task 1 ran attempts %q, want 1, then 2 after the first kill", got)
	}
}
