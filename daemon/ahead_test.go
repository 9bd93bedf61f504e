package daemon_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
)

// Tests of tasks prepared ahead of a concurrency slot (slots.go): their
// order, and what happens to them when their file changes, the daemon
// stops or their list is refused before their slot comes.

// oneSlot starts a daemon with one concurrency slot on the lists given.
func oneSlot(t *testing.T, lists ...string) *harness {
	return startDaemon(t, lists, func(fc *config.FileConfig) { fc.Concurrency = 1 })
}

// gate returns a shell script that waits until open is called.
func gate(t *testing.T) (wait string, open func()) {
	path := filepath.Join(t.TempDir(), "gate")
	return "while [ ! -e " + path + " ]; do sleep 0.01; done", func() {
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runDir is the folder of attempt 1 of task id in list.
func (h *harness) runDir(list, id string) string {
	return filepath.Join(h.listDir(list), ".taskd", "runs", id, "1")
}

// waitPrepared waits until attempt 1 of each task of list is prepared: its
// prompt.md written, and no process group of a started agent in its
// cmd.json (which, where attempts get cgroups, is written only once the
// agent has started).
func (h *harness) waitPrepared(list string, ids ...string) {
	h.t.Helper()
	h.waitFor(list+"/"+strings.Join(ids, ",")+" prepared ahead of the slot", 10*time.Second, func() bool {
		for _, id := range ids {
			if _, err := os.Stat(filepath.Join(h.runDir(list, id), "prompt.md")); err != nil {
				return false
			}
			data, err := os.ReadFile(filepath.Join(h.runDir(list, id), "cmd.json"))
			if err == nil && strings.Contains(string(data), `"pid"`) || err != nil && !os.IsNotExist(err) {
				return false
			}
		}
		return true
	})
}

// ran returns the words the agents wrote to file out, in order.
func ran(t *testing.T, out string) []string {
	t.Helper()
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

// aheadOfSlot starts a daemon with one slot, whose first task runs until
// the returned release is called, and drops tasks 2 and 3 behind it. It
// returns once task 2 is prepared ahead of the slot (its run folder made).
func aheadOfSlot(t *testing.T, second, third string) (h *harness, release func()) {
	t.Helper()
	h = oneSlot(t, "l")
	wait, release := gate(t)
	h.drop("l", "1", execTask("first", wait))
	h.drop("l", "2", second)
	h.drop("l", "3", third)
	h.waitPrepared("l", "2")
	return h, release
}

// TestAhead_EditedWhileWaiting: a task prepared ahead of a free slot and
// then changed in its file runs as the file says when its slot comes, not
// as it said when it was prepared; its start is logged once.
func TestAhead_EditedWhileWaiting(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "out")
	h, release := aheadOfSlot(t, execTask("second", "echo old >> "+out), execTask("third", "echo third >> "+out))
	h.drop("l", "2", execTask("second", "echo new >> "+out))
	release()
	h.waitState("l", "3", "succeeded", 20*time.Second)
	h.waitState("l", "2", "succeeded", 20*time.Second)
	if got, want := ran(t, out), []string{"new", "third"}; !slices.Equal(got, want) {
		t.Errorf("agents wrote %q, want %q (task 2 as edited, then task 3)", got, want)
	}
	prompt, err := os.ReadFile(filepath.Join(h.runDir("l", "2"), "prompt.md"))
	if err != nil || !strings.Contains(string(prompt), "echo new") {
		t.Errorf("runs/2/1/prompt.md = %q (%v), want the edited prompt", prompt, err)
	}
	if n := countEvents(h.events("l"), eventlog.TaskStarted, "2"); n != 1 {
		t.Errorf("%d TaskStarted events for task 2, want 1", n)
	}
}

// TestAhead_DeletedWhileWaiting: a task prepared ahead of a free slot and
// then deleted never runs, and its prepared run folder goes.
func TestAhead_DeletedWhileWaiting(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "out")
	h, release := aheadOfSlot(t, execTask("second", "echo second >> "+out), execTask("third", "echo third >> "+out))
	if err := os.Remove(filepath.Join(h.listDir("l"), "2.json")); err != nil {
		t.Fatal(err)
	}
	release()
	h.waitState("l", "3", "succeeded", 20*time.Second)
	if got, want := ran(t, out), []string{"third"}; !slices.Equal(got, want) {
		t.Errorf("agents wrote %q, want %q (the deleted task never ran)", got, want)
	}
	h.waitFor("task 2's prepared run folder removed", 10*time.Second, func() bool {
		_, err := os.Stat(h.runDir("l", "2"))
		return os.IsNotExist(err)
	})
	if n := countEvents(h.events("l"), eventlog.TaskStarted, "2"); n != 0 {
		t.Errorf("%d TaskStarted events for the deleted task 2, want 0", n)
	}
}

// TestAhead_CancelledWhileWaiting: a task prepared ahead of a free slot
// and then cancelled in its file never runs, and ends cancelled.
func TestAhead_CancelledWhileWaiting(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "out")
	h, release := aheadOfSlot(t, execTask("second", "echo second >> "+out), execTask("third", "echo third >> "+out))
	if _, err := control.CancelTask(t.Context(), mustOpen(t, h.listDir("l")), "2"); err != nil {
		t.Fatal(err)
	}
	h.waitState("l", "2", task.Cancelled, 20*time.Second)
	release()
	h.waitState("l", "3", "succeeded", 20*time.Second)
	if got, want := ran(t, out), []string{"third"}; !slices.Equal(got, want) {
		t.Errorf("agents wrote %q, want %q (the cancelled task never ran)", got, want)
	}
}

// TestAhead_StoppedWhileWaiting: tasks prepared ahead of a free slot when
// the daemon stops never started, so nothing is recorded for them: their
// files are left as they were, their prepared run folders go, and after a
// restart each runs once, as attempt 1.
func TestAhead_StoppedWhileWaiting(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "out")
	second, third := execTask("second", "echo second >> "+out), execTask("third", "echo third >> "+out)
	h, release := aheadOfSlot(t, second, third)
	h.stop()
	for id, want := range map[string]string{"2": second, "3": third} {
		got, err := os.ReadFile(filepath.Join(h.listDir("l"), id+".json"))
		if err != nil || string(got) != want {
			t.Errorf("task %s after the stop: %s (%v), want the file as dropped: %s", id, got, err, want)
		}
		if _, err := os.Stat(h.runDir("l", id)); !os.IsNotExist(err) {
			t.Errorf("task %s's prepared run folder is still there after the stop (%v)", id, err)
		}
		for _, typ := range []string{eventlog.TaskStarted, eventlog.TaskInterrupted} {
			if n := countEvents(h.events("l"), typ, id); n != 0 {
				t.Errorf("task %s: %d %s events, want none", id, n, typ)
			}
		}
	}
	release()
	h.start()
	for _, id := range []string{"2", "3"} {
		tf := h.waitState("l", id, "succeeded", 20*time.Second)
		if n, _ := tf.Metadata.Object("taskd").Int("attempt"); n != 1 {
			t.Errorf("task %s succeeded as attempt %d, want 1", id, n)
		}
	}
	if got, want := ran(t, out), []string{"second", "third"}; !slices.Equal(got, want) {
		t.Errorf("agents wrote %q, want %q", got, want)
	}
}

// TestAhead_IDOrder: with one slot and two tasks prepared ahead of it,
// tasks still start in id order: the one prepared first gets the slot
// first, even when a later one is ready sooner; and so do tasks that are
// claimed when prepared (a loop of one iteration) alternating with simple
// ones.
func TestAhead_IDOrder(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		claimed func(i int) bool
	}{
		{"simple", func(int) bool { return false }},
		{"mixed", func(i int) bool { return i%2 == 1 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := oneSlot(t, "l")
			out := filepath.Join(t.TempDir(), "out")
			var want []string
			for i := 1; i <= 20; i++ {
				id := strconv.Itoa(i)
				var extra []string
				if tt.claimed(i) {
					extra = []string{"taskd.loop", `{"max": 1}`}
				}
				h.drop("l", id, execTask("task "+id, "echo "+id+" >> "+out, extra...))
				want = append(want, id)
			}
			for _, id := range want {
				h.waitState("l", id, "succeeded", 30*time.Second)
			}
			if got := ran(t, out); !slices.Equal(got, want) {
				t.Errorf("agents ran in the order %v, want %v\n%s", got, want, h.logs)
			}
		})
	}
}

// busyList drops into list a of h, which has one slot, a first task that
// runs until open is called and n-1 short tasks behind it, each writing its
// name to out, and returns once the next is prepared ahead of the slot.
func busyList(t *testing.T, h *harness, n int, out string) (open func()) {
	t.Helper()
	wait, open := gate(t)
	h.drop("a", "1", execTask("a1", wait+"; echo a1 >> "+out))
	for i := 2; i <= n; i++ {
		id := strconv.Itoa(i)
		h.drop("a", id, execTask("a"+id, "sleep 0.02; echo a"+id+" >> "+out))
	}
	h.waitPrepared("a", "2")
	return open
}

// TestAhead_ClaimedNotStarved: with one slot, a list full of simple tasks
// (prepared two ahead) does not keep another list's task, which is claimed
// when prepared (one ahead), waiting: lists are served in turn.
func TestAhead_ClaimedNotStarved(t *testing.T) {
	t.Parallel()
	h := oneSlot(t, "a", "b")
	out := filepath.Join(t.TempDir(), "out")
	open := busyList(t, h, 30, out)
	// A loop makes the task claimed before it is prepared.
	h.drop("b", "1", execTask("b1", "echo b1 >> "+out, "taskd.loop", `{"max": 1}`))
	h.waitEvents("b", eventlog.TaskAccepted, "1", 1)
	open()
	h.waitFor("b1 ran", 30*time.Second, func() bool {
		data, _ := os.ReadFile(out)
		return strings.Contains(string(data), "b1")
	})
	agents := ran(t, out)
	// Served in turn, b1 runs within a few of list a's tasks (its claim is
	// written while they run); waiting behind list a, it runs last.
	if i := slices.Index(agents, "b1"); i < 0 || i > 7 {
		t.Errorf("b1 ran as agent %d, after %v: list b waited behind list a", i+1, agents[:max(i, 0)])
	}
}

// TestAhead_ResumeNotStarved: with one slot and a list busy with simple
// tasks (every freed slot goes straight to a job prepared ahead of it), a
// parent in another list whose children are done, which needs a slot but
// has nothing to prepare, gets one in turn, not after the busy list.
func TestAhead_ResumeNotStarved(t *testing.T) {
	t.Parallel()
	h := oneSlot(t, "a", "b")
	const n = 40
	busyList(t, h, n, filepath.Join(t.TempDir(), "out"))()
	// A parent waiting for a child whose file is gone: its wait is over.
	h.drop("b", "p", `{"subject":"p","owner":"taskd","status":"in_progress","metadata":{"taskd":{"agent":"exec","prompt":"true","state":"waiting","attempt":1,"children":{"parallel":["gone"]}}}}`)
	h.waitState("b", "p", "succeeded", 60*time.Second)
	// In turn, the parent is done within a few of list a's tasks; starved,
	// only after all of them started.
	if started := countEvents(h.events("a"), eventlog.TaskStarted, ""); started > 10 {
		t.Errorf("the parent was done only after %d of list a's %d tasks had started: list b waited behind list a", started, n)
	}
}

// droppedAgain starts a daemon with one slot, runs task 2 (the file
// second), and drops it again with the same contents behind a first task
// that runs until open is called; it returns once task 2 is prepared again,
// as attempt 1, in the run folder its first run left.
func droppedAgain(t *testing.T, second string) (h *harness, open func()) {
	t.Helper()
	h = oneSlot(t, "l")
	h.drop("l", "2", second)
	h.waitState("l", "2", "succeeded", 10*time.Second)
	wait, open := gate(t)
	h.drop("l", "1", execTask("first", wait))
	h.waitEvents("l", eventlog.TaskStarted, "1", 1)
	h.drop("l", "2", second) // a new file: it runs again
	h.waitFor("task 2 prepared again", 10*time.Second, func() bool {
		data, err := os.ReadFile(filepath.Join(h.runDir("l", "2"), "cmd.json"))
		return err == nil && !strings.Contains(string(data), `"pid"`)
	})
	return h, open
}

// TestAhead_StopKeepsEarlierRun: a task dropped again with the same
// contents runs again as attempt 1, in the run folder its first run left
// (its prompt, logs, cmd.json and result.json are replaced); a stop while
// it is only prepared removes what was prepared and leaves the other
// files of the first run alone.
func TestAhead_StopKeepsEarlierRun(t *testing.T) {
	t.Parallel()
	h, open := droppedAgain(t, execTask("second", `echo report > "$TASKD_RUN_DIR/report.txt"`))
	h.stop()
	open()
	run := h.runDir("l", "2")
	if _, err := os.Stat(filepath.Join(run, "report.txt")); err != nil {
		t.Errorf("the first run's report.txt is gone after the stop: %v", err)
	}
	if _, err := os.Stat(filepath.Join(run, "cmd.json")); !os.IsNotExist(err) {
		t.Errorf("the prepared cmd.json is still there after the stop (%v)", err)
	}
}

// TestAhead_StopThenRestartRunsAgain: a task dropped again with the same
// contents, prepared (into its first run's folder) when the daemon stops,
// runs again after a restart: the first run's result is not taken for
// the second's.
func TestAhead_StopThenRestartRunsAgain(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	h, open := droppedAgain(t, execTask("second", `echo run >> `+count))
	h.stop()
	open()
	h.start()
	h.waitState("l", "1", "succeeded", 20*time.Second)
	h.waitFor("task 2 run again", 20*time.Second, func() bool {
		data, _ := os.ReadFile(count)
		return strings.Count(string(data), "run") == 2
	})
	h.waitState("l", "2", "succeeded", 20*time.Second)
}

// TestAhead_ListRefusedWhileWaiting: tasks prepared ahead of a slot in a
// list that becomes writable by others do not start (a refused list
// starts nothing), and run once its mode is fixed.
func TestAhead_ListRefusedWhileWaiting(t *testing.T) {
	t.Parallel()
	h := oneSlot(t, "good", "shared")
	out := filepath.Join(t.TempDir(), "out")
	wait, open := gate(t)
	h.drop("shared", "1", execTask("first", wait))
	h.drop("shared", "2", execTask("second", "echo 2 >> "+out))
	h.drop("shared", "3", execTask("third", "echo 3 >> "+out))
	h.waitPrepared("shared", "2")
	if err := os.Chmod(h.listDir("shared"), 0o777); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the list to be refused", 10*time.Second, func() bool {
		return strings.Contains(h.logs.String(), "not serving list")
	})
	open()
	// A task of the other list runs after the slot is free.
	h.drop("good", "s", execTask("sentinel", "true"))
	h.waitState("good", "s", task.Succeeded, 10*time.Second)
	if data, err := os.ReadFile(out); err == nil {
		t.Errorf("tasks of the refused list ran: %q", data)
	}
	if err := os.Chmod(h.listDir("shared"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"2", "3"} {
		h.waitState("shared", id, task.Succeeded, 10*time.Second)
	}
}
