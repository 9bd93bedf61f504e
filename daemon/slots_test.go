package daemon_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// aliveMarker writes a script, run as `sh SCRIPT NAME SECONDS`, that makes
// whoever runs it (an agent, a loop's condition command) seen by the
// others: it marks itself alive (a directory NAME-PID), writes down the
// markers alive around it twice, SECONDS apart, and unmarks itself before
// it exits. It exits 1, so that as a loop condition it never ends a loop
// early. seen returns every observation by file name (NAME-PID.1 and .2)
// with the markers it saw.
func aliveMarker(t *testing.T) (script string, seen func() map[string][]string) {
	t.Helper()
	work := t.TempDir()
	live := filepath.Join(work, "live")
	obs := filepath.Join(work, "seen")
	for _, d := range []string{live, obs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script = filepath.Join(work, "mark.sh")
	text := fmt.Sprintf(`me="$1-$$"
mkdir %[1]s/"$me"
ls %[1]s > %[2]s/"$me".1
sleep "$2"
ls %[1]s > %[2]s/"$me".2
rmdir %[1]s/"$me"
exit 1
`, live, obs)
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, func() map[string][]string {
		t.Helper()
		entries, err := os.ReadDir(obs)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(obs, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = strings.Fields(string(data))
		}
		return out
	}
}

// oneAlive fails t for every observation of aliveMarker that saw more than
// one agent alive (with one slot, none may), and returns how many
// observations a loop's condition command ("until") made.
func oneAlive(t *testing.T, observations map[string][]string) (untils int) {
	t.Helper()
	for name, alive := range observations {
		if len(alive) > 1 {
			t.Errorf("%s saw %d agents alive with one slot: %v", name, len(alive), alive)
		}
		if strings.HasPrefix(name, "until-") {
			untils++
		}
	}
	return untils
}

// TestConcurrencyLimits runs short agents in two lists, one limited to a
// single agent, and has every agent count the agents alive around it
// (aliveMarker). No agent may see more than the global limit, or more than
// its list's limit of its own list; and the global limit must be reached,
// or the check proves nothing. Slots change hands outside the daemon's
// loop (slots.go), so this is the check that the hand-over never lets one
// slot serve two agents.
func TestConcurrencyLimits(t *testing.T) {
	t.Parallel()
	const global, perTasks = 2, 8
	h := startDaemon(t, []string{"a", "b"}, func(fc *config.FileConfig) {
		fc.Concurrency = global
		fc.Lists = map[string]config.ListConfig{"a": {Concurrency: 1}}
	})
	mark, seen := aliveMarker(t)
	// List a's agents take longer, so that b's free slots while a's next
	// task waits for one.
	for i := 1; i <= perTasks; i++ {
		h.drop("a", strconv.Itoa(i), execTask("a task", fmt.Sprintf(`sh %s "a-$TASKD_TASK_ID" 0.2; true`, mark)))
		h.drop("b", strconv.Itoa(i), execTask("b task", fmt.Sprintf(`sh %s "b-$TASKD_TASK_ID" 0.05; true`, mark)))
	}
	for i := 1; i <= perTasks; i++ {
		for _, l := range []string{"a", "b"} {
			if got := h.waitState(l, strconv.Itoa(i), "succeeded", 60*time.Second); got.Status != "completed" {
				t.Fatalf("task %s/%d: status %q, want completed", l, i, got.Status)
			}
		}
	}

	observations := seen()
	if got, want := len(observations), 2*2*perTasks; got != want {
		t.Fatalf("%d observations, want %d", got, want)
	}
	maxAll, maxA := 0, 0
	for name, alive := range observations {
		inA := 0
		for _, m := range alive {
			if strings.HasPrefix(m, "a-") {
				inA++
			}
		}
		if len(alive) > global {
			t.Errorf("%s saw %d agents alive, more than the limit %d: %v", name, len(alive), global, alive)
		}
		if inA > 1 {
			t.Errorf("%s saw %d agents of list a alive, more than its limit 1: %v", name, inA, alive)
		}
		maxAll, maxA = max(maxAll, len(alive)), max(maxA, inA)
	}
	if maxAll != global || maxA != 1 {
		t.Errorf("at most %d agents (%d of list a) were seen alive at once; want the limits %d and 1 reached", maxAll, maxA, global)
	}
}

// TestConcurrencyLimits_LoopCondition: a loop's condition is checked by a
// command of its own after each run (untilCommand); with one slot, no other
// task's agent may run beside that command.
func TestConcurrencyLimits_LoopCondition(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) { fc.Concurrency = 1 })
	mark, seen := aliveMarker(t)
	h.drop("l", "1", s2Task(fmt.Sprintf("/subtask {loop:3 && untilCommand:sh %s until 0.1} sh %s loop 0.1; true", mark, mark), t.TempDir(), nil))
	for i := 2; i <= 6; i++ {
		h.drop("l", strconv.Itoa(i), execTask("other", fmt.Sprintf("sh %s other 0.1; true", mark)))
	}
	for i := 1; i <= 6; i++ {
		h.waitState("l", strconv.Itoa(i), "succeeded", 60*time.Second)
	}
	observations := seen()
	if untils := oneAlive(t, observations); untils == 0 {
		t.Fatalf("the loop's condition command never ran (%d observations)", len(observations))
	}
}

// TestConcurrencyLimits_ConditionAddedWhileRunning: a task's agent adds a
// loop with a condition command to its own task file. The task's slot was
// given back when its agent exited (it had no condition then), so the
// condition command waits for a slot of its own: with one slot, it never
// runs beside the next task's agent.
func TestConcurrencyLimits_ConditionAddedWhileRunning(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) { fc.Concurrency = 1 })
	mark, seen := aliveMarker(t)
	edited := filepath.Join(t.TempDir(), "edited.json")
	file := filepath.Join(h.listDir("l"), "1.json")
	script := fmt.Sprintf("cp %s %s.new && mv %s.new %s", edited, file, file, file)
	loop := fmt.Sprintf(`{"max": 1, "untilCommand": "sh %s until 0.3"}`, mark)
	if err := os.WriteFile(edited, []byte(execTask("loop", script, "taskd.loop", loop)), 0o644); err != nil {
		t.Fatal(err)
	}
	h.drop("l", "1", execTask("loop", script))
	h.drop("l", "2", execTask("other", fmt.Sprintf("sh %s other 0.3; true", mark)))
	for _, id := range []string{"1", "2"} {
		h.waitState("l", id, task.Succeeded, 30*time.Second)
	}
	if untils := oneAlive(t, seen()); untils == 0 {
		t.Fatal("the condition command added while the agent ran never ran")
	}
}

// TestConcurrencyLimits_ListMadeAgain: a list directory removed while its
// agent runs, and made again under the same id, does not start a new
// agent beside the old one, which still ends (it ignores SIGTERM for the
// grace period): the new list's limit counts the old list's agent.
func TestConcurrencyLimits_ListMadeAgain(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"a"}, func(fc *config.FileConfig) {
		fc.Concurrency = 2
		fc.Grace = "6s"
		fc.Lists = map[string]config.ListConfig{"a": {Concurrency: 1}}
	})
	mark, seen := aliveMarker(t)
	live := func() string {
		entries, _ := os.ReadDir(filepath.Join(filepath.Dir(mark), "live"))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return strings.Join(names, " ")
	}
	h.drop("a", "1", execTask("old", fmt.Sprintf(`trap '' TERM; sh %s old 3; true`, mark)))
	h.waitFor("the first agent to run", 30*time.Second, func() bool { return strings.Contains(live(), "old-") })

	// The daemon may write into the list's .taskd while it goes: removed
	// again until nothing is left.
	h.waitFor("the list to be removed", 30*time.Second, func() bool { return os.RemoveAll(h.listDir("a")) == nil })
	h.waitFor("the daemon to drop the list", 30*time.Second, func() bool { return strings.Contains(h.logs.String(), "list went away") })
	if err := os.Mkdir(h.listDir("a"), 0o700); err != nil {
		t.Fatal(err)
	}
	h.drop("a", "2", execTask("new", fmt.Sprintf(`sh %s new 0.1; true`, mark)))
	if !strings.Contains(live(), "old-") {
		t.Fatal("the first agent ended before the list was made again; the test proves nothing")
	}
	h.waitState("a", "2", "succeeded", 60*time.Second)

	observations := seen()
	checked := 0
	for name, alive := range observations {
		if !strings.HasPrefix(name, "new-") {
			continue
		}
		checked++
		if len(alive) > 1 {
			t.Errorf("%s saw %d agents alive in a list limited to 1: %v", name, len(alive), alive)
		}
	}
	if checked == 0 {
		t.Fatalf("the new list's agent left no observations: %v", observations)
	}
}

// leftRunning writes task id into list as a dead daemon left it: attempt
// 1 of a loop (at most max iterations, ended by untilCommand) running,
// its agent exited and its result.json written.
func leftRunning(t *testing.T, root, list, id string, max int, until string) {
	t.Helper()
	runDir := filepath.Join(root, list, ".taskd", "runs", id, "1")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, "result.json"), []byte(`{"success": true, "summary": "ran before the crash", "exitCode": 0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"id": id, "subject": "loop", "description": "", "activeForm": "loop",
		"status": "in_progress", "owner": "taskd", "blocks": []string{}, "blockedBy": []string{},
		"metadata": map[string]any{"taskd": map[string]any{
			"agent": "exec", "cwd": t.TempDir(), "state": "running", "attempt": 1, "runDir": ".taskd/runs/" + id + "/1",
			"prompt": "true", "loop": map[string]any{"max": max, "untilCommand": until}}}})
	tmp := filepath.Join(root, list, "."+id+".left")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(root, list, id+".json")); err != nil {
		t.Fatal(err)
	}
}

// untilReady reports whether the recovered loop task id of list has made
// its condition command's run folder (it waits for its slot, or runs).
func (h *harness) untilReady(list, id string) bool {
	_, err := os.Stat(filepath.Join(h.runDir(list, id), "until", "prompt.md"))
	return err == nil
}

// TestConcurrencyLimits_Recovery: a task a dead daemon left running, whose
// attempt ended meanwhile, is recovered by a job that takes no slot; but
// recording the attempt runs the loop's condition command, an agent of
// its own, and that one waits for a slot like any other: with one slot,
// no other task's agent runs beside it.
func TestConcurrencyLimits_Recovery(t *testing.T) {
	t.Parallel()
	root := newRoot(t, "l")
	mark, seen := aliveMarker(t)
	leftRunning(t, root, "l", "1", 2, fmt.Sprintf("sh %s until 0.3", mark))
	cfg, err := config.NewConfig(root, nil, &config.FileConfig{Concurrency: 1, Grace: "2s"})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, root: root, cfg: cfg, logs: &syncBuffer{}}
	for i := 2; i <= 3; i++ {
		h.drop("l", strconv.Itoa(i), execTask("other", fmt.Sprintf("sh %s other 0.3; true", mark)))
	}
	h.start()
	t.Cleanup(h.stop)
	for i := 1; i <= 3; i++ {
		h.waitState("l", strconv.Itoa(i), task.Succeeded, 60*time.Second)
	}
	if !strings.Contains(h.logs.String(), "recording the result of an attempt that ended while the daemon was down") {
		t.Fatal("task 1 was not recovered from its result.json; the test proves nothing")
	}
	if untils := oneAlive(t, seen()); untils == 0 {
		t.Fatal("the loop's condition command never ran")
	}
}

// TestConcurrencyLimits_RecoveryLeavesRoom: recovered tasks waiting for a
// slot of their list (limited to one) for their conditions do not count
// as prepared ahead of a slot, which would keep another list from
// preparing its task for the free global slot.
func TestConcurrencyLimits_RecoveryLeavesRoom(t *testing.T) {
	t.Parallel()
	root := newRoot(t, "a", "b")
	wait, open := gate(t)
	t.Cleanup(open)
	ids := []string{"1", "2", "3", "4", "5", "6"} // more than prepared ahead of 2 slots
	for _, id := range ids {
		leftRunning(t, root, "a", id, 1, wait+"; exit 1")
	}
	cfg, err := config.NewConfig(root, nil, &config.FileConfig{Concurrency: 2, Grace: "2s",
		Lists: map[string]config.ListConfig{"a": {Concurrency: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, root: root, cfg: cfg, logs: &syncBuffer{}}
	h.start()
	t.Cleanup(h.stop)
	h.waitFor("list a's conditions to wait for a slot or run", 20*time.Second, func() bool {
		for _, id := range ids {
			if !h.untilReady("a", id) {
				return false
			}
		}
		return true
	})
	h.drop("b", "1", execTask("b", "true"))
	h.waitState("b", "1", task.Succeeded, 20*time.Second)
	open()
	for _, id := range ids {
		h.waitState("a", id, task.Succeeded, 30*time.Second)
	}
}

// TestLoop_StopWhileRecoveredConditionWaits: the daemon stops while a
// recovered loop's condition waits for its slot. The condition never ran,
// so nothing is decided: the iteration is recorded as interrupted (not as
// one more iteration, not satisfied) and runs again at the next start,
// whose condition ends the loop.
func TestLoop_StopWhileRecoveredConditionWaits(t *testing.T) {
	t.Parallel()
	h := oneSlot(t, "l")
	wait, open := gate(t)
	t.Cleanup(open)
	h.drop("l", "2", execTask("holds the slot", wait))
	h.waitEvents("l", eventlog.TaskStarted, "2", 1)
	leftRunning(t, h.root, "l", "1", 3, "exit 0")
	h.waitFor("task 1's condition to wait for the slot", 20*time.Second, func() bool { return h.untilReady("l", "1") })
	h.stop()

	tf := h.read("l", "1")
	it, _ := tf.Metadata.Object("taskd").Int("loopIteration")
	if got, want := stateOf(tf), task.None; got != want || tf.Status != taskfile.StatusPending || it != 0 {
		t.Errorf("after the stop: state %q, status %q, loopIteration %d; want %q, pending, 0", got, tf.Status, it, want)
	}
	evs := h.waitEvents("l", eventlog.TaskInterrupted, "1", 1)
	if n := countEvents(evs, eventlog.LoopIteration, "1"); n != 0 {
		t.Errorf("%d LoopIteration events before the condition ran; want 0", n)
	}
	open()
	h.start()
	tf = h.waitState("l", "1", task.Succeeded, 20*time.Second)
	if got, _ := tf.Metadata.Object("taskd").String("loopExit"); got != "satisfied" {
		t.Errorf("loopExit = %q, want satisfied", got)
	}
}
