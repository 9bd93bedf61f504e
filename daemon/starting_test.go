package daemon_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestAhead_StartingUntilItsSlot: with two slots and four tasks, the two
// whose agents run are running (in_progress), and the two claimed and
// prepared ahead of a slot are starting: their claims are on disk (state,
// attempt, start of the wait) while their files still say pending, which
// is what Claude Code's list shows, and taskd status says they wait for a
// slot. When the slots free, each agent starts and its task is marked
// running (startmark_test.go), and every task runs once.
func TestAhead_StartingUntilItsSlot(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) { fc.Concurrency = 2 })
	wait, release := gate(t)
	marks := t.TempDir()
	for i := 1; i <= 4; i++ {
		id := strconv.Itoa(i)
		h.drop("l", id, execTask("task "+id, wait+"; echo $TASKD_ATTEMPT >> "+filepath.Join(marks, id)))
	}
	for _, id := range []string{"1", "2"} {
		h.waitState("l", id, task.Running, 20*time.Second)
	}
	h.waitPrepared("l", "3", "4")
	claimedAt := map[string]time.Time{}
	for _, id := range []string{"3", "4"} {
		tf := h.waitState("l", id, task.Starting, 10*time.Second)
		m := tf.Metadata.Object("taskd")
		n, _ := m.Int("attempt")
		at, _ := m.String("startedAt")
		claimedAt[id], _ = time.Parse(time.RFC3339Nano, at)
		if tf.Status != taskfile.StatusPending || n != 1 || claimedAt[id].IsZero() {
			t.Errorf("task %s prepared ahead: status %q, attempt %d, startedAt %q; want pending, its claim (attempt 1, a time) on disk", id, tf.Status, n, at)
		}
	}
	for _, id := range []string{"1", "2"} {
		if tf := h.read("l", id); tf.Status != taskfile.StatusInProgress {
			t.Errorf("task %s runs with status %q, want in_progress", id, tf.Status)
		}
	}
	lists, err := status.Snapshot(h.root, []string{"l"}, false)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, ts := range lists[0].Tasks {
		count[ts.State]++
		if ts.State == string(task.Starting) && ts.WaitingFor != status.StartingWaitsFor {
			t.Errorf("status of starting task %s waits for %q", ts.ID, ts.WaitingFor)
		}
	}
	if count["running"] != 2 || count["starting"] != 2 {
		t.Errorf("status shows %v, want 2 running and 2 starting (concurrency 2)", count)
	}

	released := time.Now()
	release()
	for i := 1; i <= 4; i++ {
		id := strconv.Itoa(i)
		h.waitState("l", id, task.Succeeded, 30*time.Second)
		if got, _ := os.ReadFile(filepath.Join(marks, id)); string(got) != "1\n" {
			t.Errorf("task %s ran attempts %q, want once", id, got)
		}
	}
	evs := h.events("l")
	for _, id := range []string{"3", "4"} {
		var started time.Time
		for _, e := range eventsFor(evs, eventlog.TaskStarted, id) {
			started = e.TS
		}
		if started.Before(released) {
			t.Errorf("task %s's agent started at %v, before the slot freed at %v", id, started, released)
		}
		at, _ := h.read("l", id).Metadata.Object("taskd").String("startedAt")
		if ts, _ := time.Parse(time.RFC3339Nano, at); !ts.After(claimedAt[id]) {
			t.Errorf("task %s: startedAt %s, want the start of its agent, after its claim at %v", id, at, claimedAt[id])
		}
	}
}

// TestAhead_StartingSurvivesSIGKILL: a daemon killed while a task waits,
// starting, for its slot leaves a claim that parses; the next daemon finds
// that its agent never started and takes the claim back (nothing of the
// attempt ran, so nothing is recorded of it): the task runs once, as
// attempt 1, and is never counted as interrupted.
func TestAhead_StartingSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	root := newRoot(t, "l")
	h := &harness{t: t, root: root, logs: &syncBuffer{}}
	wait, release := gate(t)
	marks := t.TempDir()
	p := startDaemonProc(t, root, 1)
	for _, id := range []string{"1", "2"} {
		h.drop("l", id, execTask("task "+id, "echo $TASKD_ATTEMPT >> "+filepath.Join(marks, id)+"; "+wait))
	}
	h.waitFor("task 1's agent to run", 20*time.Second, func() bool { return readString(marks, "1") == "1\n" })
	h.waitPrepared("l", "2")
	h.waitState("l", "2", task.Starting, 10*time.Second)
	p.kill(t)
	if tf, err := taskfile.ReadFile(filepath.Join(root, "l", "2.json")); err != nil || task.Of(tf) != task.Starting {
		t.Fatalf("after SIGKILL task 2: %v, %v", tf, err)
	}
	release()
	p2 := startDaemonProc(t, root, 1)
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	h.waitState("l", "2", task.Succeeded, 30*time.Second)
	p2.term(t)
	if got, _ := os.ReadFile(filepath.Join(marks, "1")); string(got) != "1\n2\n" {
		t.Errorf("task 1's agent ran attempts %q, want 1 (killed) and 2", got)
	}
	if got, _ := os.ReadFile(filepath.Join(marks, "2")); string(got) != "1\n" {
		t.Errorf("task 2's agent ran attempts %q, want attempt 1 once", got)
	}
	evs := h.events("l")
	if n := countEvents(evs, eventlog.TaskInterrupted, "2"); n != 0 {
		t.Errorf("task 2, whose agent never started before the kill, has %d TaskInterrupted events:\n%s", n, eventsOf(evs, "2"))
	}
	if n, _ := h.read("l", "2").Metadata.Object("taskd").Int("attempt"); n != 1 {
		t.Errorf("task 2 ended as attempt %d, want 1", n)
	}
	if !strings.Contains(p2.log.String(), "took back the claim of an attempt prepared ahead of its slot") {
		t.Errorf("the restarted daemon did not say it took the claim back:\n%s", p2.log)
	}
}
