package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/parallel"
	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/daemon/recur"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
	"github.com/taskd/taskd/internal/clock"
	"github.com/taskd/taskd/taskfile"
)

// t0 is when the tests' fake clocks start: a Monday noon, in UTC, far
// from the time the suite runs at.
var t0 = time.Date(2031, 3, 3, 12, 0, 0, 0, time.UTC)

// TestQueue_PriorityOrder: with one slot taken by a task that runs until
// released, five tasks arrive one after another, each of a higher
// priority than the last and a higher id. Each takes the place of the
// one prepared ahead of the slot (bumped: its claim taken back); released,
// they run from the highest priority to the lowest, never in id order,
// and the running task is never interrupted.
func TestQueue_PriorityOrder(t *testing.T) {
	t.Parallel()
	h := oneSlot(t, "l")
	dir := t.TempDir()
	out := filepath.Join(dir, "order")
	wait, release := untilReleased(t, dir, "gate")
	h.drop("l", "1", execTask("gate", wait+"; echo 1 >> "+out))
	h.waitState("l", "1", task.Running, 10*time.Second)
	h.waitFor("the gate's agent to start", 10*time.Second, func() bool { return agentStarted(h, "l", "1") })
	for i, id := range []string{"2", "3", "4", "5", "6"} {
		h.drop("l", id, execTask("task "+id, "echo "+id+" >> "+out, "taskd.priority", strconv.Itoa(i+1)))
		// With one slot, one task is claimed ahead of it: the newest, of
		// the highest priority, whose claim took the place of the last.
		h.waitState("l", id, task.Starting, 10*time.Second)
		if id != "2" {
			prev := strconv.Itoa(i + 1)
			h.waitFor("task "+prev+"'s claim taken back", 10*time.Second, func() bool {
				tf, err := taskfile.ReadFile(filepath.Join(h.listDir("l"), prev+".json"))
				return err == nil && task.Of(tf) == task.None && tf.Status != taskfile.StatusInProgress
			})
		}
	}
	release()
	for _, id := range []string{"2", "3", "4", "5", "6"} {
		h.waitState("l", id, task.Succeeded, 30*time.Second)
	}
	if got, want := ran(t, out), []string{"1", "6", "5", "4", "3", "2"}; !slices.Equal(got, want) {
		t.Errorf("ran %v, want %v", got, want)
	}
	if tf := h.read("l", "1"); stateOf(tf) != task.Succeeded {
		t.Errorf("the running task ended %s", stateOf(tf))
	}
	for _, id := range []string{"2", "3", "4", "5", "6"} {
		if n := countEvents(h.events("l"), eventlog.TaskStarted, id); n != 1 {
			t.Errorf("task %s started %d times, want once", id, n)
		}
	}
}

// untilReleased returns a script that waits until release is called.
func untilReleased(t *testing.T, dir, name string) (script string, release func()) {
	path := filepath.Join(dir, name+".released")
	return "while [ ! -e " + path + " ]; do sleep 0.01; done", func() {
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// agentStarted reports whether the agent of task id's first attempt has
// started (its cmd.json names its process).
func agentStarted(h *harness, list, id string) bool {
	data, err := os.ReadFile(filepath.Join(h.runDir(list, id), "cmd.json"))
	return err == nil && strings.Contains(string(data), `"pid"`)
}

// settled makes a control task in list and waits until it has succeeded:
// the daemon has handled what came before it (the loop serves one event
// after another).
func (h *harness) settled(list, id string) {
	h.t.Helper()
	h.drop(list, id, execTask("control "+id, "true"))
	h.waitState(list, id, task.Succeeded, 20*time.Second)
}

// TestQueue_NotBefore: a task due three seconds after now (on the
// daemon's clock) does not start before its time, neither in the daemon
// that saw it nor in a daemon started again, and starts once its time
// has come; a task whose time is past starts at once.
func TestQueue_NotBefore(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	h := startDaemonClock(t, clk, []string{"l"})
	h.drop("l", "1", execTask("later", "true", "taskd.notBefore", `"`+task.Stamp(t0.Add(3*time.Second))+`"`))
	h.drop("l", "2", execTask("past", "true", "taskd.notBefore", `"`+task.Stamp(t0.Add(-time.Hour))+`"`))
	h.waitState("l", "2", task.Succeeded, 20*time.Second)
	h.settled("l", "c1")
	clk.Advance(2900 * time.Millisecond)
	h.settled("l", "c2")
	if tf := h.read("l", "1"); stateOf(tf) != task.None {
		t.Fatalf("at %s the task due at +3s is %s", clk.Now().Sub(t0), stateOf(tf))
	}

	h.stop()
	h.start()
	h.settled("l", "c3")
	if tf := h.read("l", "1"); stateOf(tf) != task.None {
		t.Fatalf("after a restart at %s the task due at +3s is %s", clk.Now().Sub(t0), stateOf(tf))
	}
	clk.Advance(100 * time.Millisecond)
	tf := h.waitState("l", "1", task.Succeeded, 20*time.Second)
	if n := countEvents(h.events("l"), eventlog.TaskStarted, "1"); n != 1 {
		t.Errorf("the task started %d times", n)
	}
	if s, _ := tf.Metadata.Object("taskd").String("notBefore"); s == "" {
		t.Errorf("notBefore was dropped from the file")
	}
}

// TestQueue_ScheduleEvery2s: a schedule of every 2 seconds makes a run
// at each time on the daemon's clock; a time that comes while its run
// still goes is passed over, not overlapped; stopped for 10 seconds, the
// daemon catches up with one run, not five.
func TestQueue_ScheduleEvery2s(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	h := startDaemonClock(t, clk, []string{"l"})
	dir := t.TempDir()
	// Each run notes that it started and waits for its release.
	script := `touch ` + dir + `/started-$TASKD_TASK_ID; while [ ! -e ` + dir + `/release-$TASKD_TASK_ID ]; do sleep 0.01; done`
	h.drop("l", "1", execTask("every 2s", script, "taskd.schedule", `"@every 2s"`))
	rec := h.waitRecord("l", "1", "its first next time", func(r recur.Record) bool { return r.Next.Equal(t0.Add(2 * time.Second)) })

	clk.Advance(2 * time.Second)
	rec = h.waitRecord("l", "1", "its first run", func(r recur.Record) bool { return r.Runs == 1 })
	first := rec.LastRun
	h.waitFor("the first run's agent", 20*time.Second, func() bool { return exists(filepath.Join(dir, "started-"+first)) })

	clk.Advance(2 * time.Second) // due while the first run goes on
	rec = h.waitRecord("l", "1", "the time passed over", func(r recur.Record) bool { return r.Skipped == 1 })
	if rec.Runs != 1 || !rec.Next.Equal(t0.Add(6*time.Second)) {
		t.Fatalf("after a time passed over: %+v", rec)
	}
	release(t, dir, first)
	h.waitState("l", first, task.Succeeded, 20*time.Second)

	clk.Advance(2 * time.Second)
	rec = h.waitRecord("l", "1", "the second run", func(r recur.Record) bool { return r.Runs == 2 })
	second := rec.LastRun
	if second == first {
		t.Fatalf("the second run is the first's file %s", first)
	}
	release(t, dir, second)
	h.waitState("l", second, task.Succeeded, 20*time.Second)
	run := h.read("l", second)
	if p, _ := run.Metadata.Object("taskd").String("parent"); p != "1" {
		t.Errorf("the run's parent is %q", p)
	}
	if at, _ := run.Metadata.Object("taskd").String("scheduledFor"); at != task.Stamp(t0.Add(6*time.Second)) {
		t.Errorf("the run was made for %s, want %s", at, task.Stamp(t0.Add(6*time.Second)))
	}

	h.stop()
	clk.Advance(10 * time.Second) // t0+16s: due at 8, 10, 12, 14 and 16
	h.start()
	rec = h.waitRecord("l", "1", "the catch-up run", func(r recur.Record) bool { return r.Runs == 3 })
	third := rec.LastRun
	if !rec.Last.Equal(t0.Add(8*time.Second)) || rec.Missed != 4 || !rec.Next.Equal(t0.Add(18*time.Second)) {
		t.Errorf("after the downtime: %+v, want a run for +8s standing for 4 more, next at +18s", rec)
	}
	release(t, dir, third)
	h.waitState("l", third, task.Succeeded, 20*time.Second)
	h.settled("l", "c")
	if runs := h.runsOf("l", "1"); len(runs) != 3 {
		t.Errorf("runs %v, want 3", runs)
	}
	if n := countEvents(h.events("l"), eventlog.RunScheduled, "1"); n != 3 {
		t.Errorf("%d RunScheduled events, want 3", n)
	}
	if tf := h.read("l", "1"); stateOf(tf) != task.None || tf.Status != taskfile.StatusPending {
		t.Errorf("the schedule is %s/%s, want still pending", tf.Status, stateOf(tf))
	}
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

func release(t *testing.T, dir, id string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "release-"+id), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitRecord waits until the schedule id's record satisfies cond.
func (h *harness) waitRecord(list, id, what string, cond func(recur.Record) bool) recur.Record {
	h.t.Helper()
	var r recur.Record
	h.waitFor("schedule "+id+": "+what, 20*time.Second, func() bool {
		tf, err := taskfile.ReadFile(filepath.Join(h.listDir(list), id+".json"))
		if err != nil {
			return false
		}
		r = recur.Of(tf)
		return cond(r)
	})
	return r
}

// runsOf returns the ids of the runs of schedule id.
func (h *harness) runsOf(list, id string) []string {
	h.t.Helper()
	dir := mustOpen(h.t.(*testing.T), h.listDir(list))
	ids, err := dir.List()
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, rid := range ids {
		if tf, err := dir.Read(rid); err == nil {
			if p, _ := tf.Metadata.Object("taskd").String("parent"); p == id {
				out = append(out, rid)
			}
		}
	}
	return out
}

// windows sets list's windows.
func windows(list string, ws ...string) harnessOption {
	return func(fc *config.FileConfig) {
		if fc.Lists == nil {
			fc.Lists = map[string]config.ListConfig{}
		}
		l := fc.Lists[list]
		l.Windows = ws
		fc.Lists[list] = l
	}
}

// TestQueue_Windows: at noon, a list whose window is 22:00-07:00 holds
// its task, and one whose window is 11:00-13:00 starts its own at once;
// at 22:00 the first starts.
func TestQueue_Windows(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	h := startDaemonClock(t, clk, []string{"night", "day", "o"}, windows("night", "22:00-07:00 UTC"), windows("day", "11:00-13:00 UTC"))
	h.drop("night", "1", execTask("overnight", "true"))
	h.drop("day", "1", execTask("by day", "true"))
	h.waitState("day", "1", task.Succeeded, 20*time.Second)
	h.settled("o", "c1")
	if tf := h.read("night", "1"); stateOf(tf) != task.None {
		t.Fatalf("at noon the night list's task is %s", stateOf(tf))
	}
	clk.Set(t0.Add(9*time.Hour + 59*time.Minute)) // 21:59
	h.settled("o", "c2")
	if tf := h.read("night", "1"); stateOf(tf) != task.None {
		t.Fatalf("at 21:59 the night list's task is %s", stateOf(tf))
	}
	clk.Set(t0.Add(10 * time.Hour)) // 22:00
	h.waitState("night", "1", task.Succeeded, 20*time.Second)
}

// TestQueue_WindowClosesBeforeTheSlot: a task prepared ahead of the only
// slot while its window is open does not start when the slot comes after
// the window closed: its claim is taken back, and it starts when the
// window opens the next day.
func TestQueue_WindowClosesBeforeTheSlot(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	h := startDaemonClock(t, clk, []string{"l", "o"}, windows("l", "11:00-13:00 UTC"), func(fc *config.FileConfig) { fc.Concurrency = 1 })
	dir := t.TempDir()
	wait, releaseGate := untilReleased(t, dir, "gate")
	h.drop("o", "1", execTask("gate", wait))
	h.waitFor("the gate's agent to start", 10*time.Second, func() bool { return agentStarted(h, "o", "1") })
	h.drop("l", "2", execTask("in the window", "true"))
	h.waitState("l", "2", task.Starting, 10*time.Second) // claimed ahead of the slot
	clk.Set(t0.Add(time.Hour))                           // 13:00: closed
	releaseGate()
	h.waitState("o", "1", task.Succeeded, 20*time.Second)
	h.waitFor("task 2's claim taken back", 10*time.Second, func() bool {
		tf, err := taskfile.ReadFile(filepath.Join(h.listDir("l"), "2.json"))
		return err == nil && task.Of(tf) == task.None
	})
	h.settled("o", "c")
	if tf := h.read("l", "2"); stateOf(tf) != task.None || agentStarted(h, "l", "2") {
		t.Fatalf("after the window closed task 2 is %s", stateOf(tf))
	}
	clk.Set(t0.Add(23 * time.Hour)) // 11:00 the next day
	h.waitState("l", "2", task.Succeeded, 20*time.Second)
	if n := countEvents(h.events("l"), eventlog.TaskStarted, "2"); n != 1 {
		t.Errorf("task 2 started %d times", n)
	}
}

// TestQueue_ParallelLowered: three tasks of a list run; the list's
// concurrency is set to 1 in the root's parallel file while they run:
// none is interrupted, and a fourth task starts only once all three have
// ended, not when the first two have (one still runs).
func TestQueue_ParallelLowered(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) { fc.Concurrency = 4 })
	dir := t.TempDir()
	var releases []func()
	for _, id := range []string{"1", "2", "3"} {
		wait, rel := untilReleased(t, dir, id)
		releases = append(releases, rel)
		h.drop("l", id, execTask("task "+id, wait))
	}
	for _, id := range []string{"1", "2", "3"} {
		h.waitFor("task "+id+"'s agent", 20*time.Second, func() bool { return agentStarted(h, "l", id) })
	}
	if err := parallel.Update(context.Background(), h.root, func(r *parallel.Record) error {
		r.Lists = map[string]int{"l": 1}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the daemon to read the parallel file", 10*time.Second, func() bool {
		return strings.Contains(h.logs.String(), `msg=concurrency`)
	})
	h.drop("l", "4", execTask("fourth", "true"))
	h.waitState("l", "4", task.Starting, 10*time.Second) // prepared ahead of a slot
	releases[0]()
	h.waitState("l", "1", task.Succeeded, 20*time.Second)
	releases[1]()
	h.waitState("l", "2", task.Succeeded, 20*time.Second)
	if agentStarted(h, "l", "4") {
		t.Fatalf("task 4 started while two agents of a list of concurrency 1 still ran")
	}
	releases[2]()
	h.waitState("l", "4", task.Succeeded, 20*time.Second)
	h.waitState("l", "3", task.Succeeded, 20*time.Second)
	for _, id := range []string{"1", "2", "3"} {
		if tf := h.read("l", id); stateOf(tf) != task.Succeeded || countEvents(h.events("l"), eventlog.TaskStarted, id) != 1 {
			t.Errorf("task %s: %s, want succeeded at its first start", id, stateOf(tf))
		}
	}
}

// TestQueue_BudgetPerWindow: the real Claude Code CLI reports what each
// attempt cost; a profile whose budget per day is below one attempt's
// cost starts no second task that day, with one slot; the next day (on
// the daemon's clock) it does.
func TestQueue_BudgetPerWindow(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	stub := claudestub.New(t, func(n int, body string) claudestub.Turn {
		return claudestub.Turn{Text: "done", OutputTokens: 50000}
	})
	clk := clock.NewFake(t0)
	h := startDaemonClock(t, clk, []string{"l", "o"}, func(fc *config.FileConfig) {
		fc.Concurrency = 1
		fc.Profiles = streamingClaude(t, bin, stub, config.ProfileSpec{MaxCostUSDPerWindow: 0.000001})
	})
	cwd := t.TempDir()
	for _, id := range []string{"1", "2"} {
		h.drop("l", id, `{"subject": "spend `+id+`", "owner": "taskd", "metadata": {"taskd": {"agent": "claude", "cwd": "`+cwd+`", "prompt": "Say done."}}}`)
	}
	first := h.waitState("l", "1", task.Succeeded, 2*time.Minute)
	if _, cost := job.ResultOf(first); cost == nil || *cost <= 0 {
		t.Fatalf("the first attempt cost %v", cost)
	}
	h.settled("o", "c")
	// Task 2 may have been prepared (claimed) while task 1 ran; its slot
	// then takes the claim back. It ends held back, its agent never
	// started.
	h.waitFor("task 2 held back and not claimed", 30*time.Second, func() bool {
		return h.heldBack("l", "2") && stateOf(h.read("l", "2")) == task.None
	})
	if n := countEvents(h.events("l"), eventlog.TaskStarted, "2"); n != 0 {
		t.Fatalf("with the day's budget spent, task 2 started %d times", n)
	}
	if n := len(stub.Bodies()); n != 1 {
		t.Fatalf("with the day's budget spent, the Messages API was asked %d times, want once (task 1)", n)
	}
	clk.Set(time.Date(2031, 3, 4, 0, 0, 0, 0, time.Local)) // midnight, the next day
	h.waitState("l", "2", task.Succeeded, 2*time.Minute)
}

// setPause changes the root's pause file as taskd pause and resume do.
func (h *harness) setPause(fn func(*pausefile.Record)) {
	h.t.Helper()
	if err := pausefile.Update(context.Background(), h.root, time.Now(), func(r *pausefile.Record) error {
		fn(r)
		return nil
	}); err != nil {
		h.t.Fatal(err)
	}
}

// heldBack reports whether the daemon has logged that it holds task id
// of list back.
func (h *harness) heldBack(list, id string) bool {
	return strings.Contains(h.logs.String(), `msg="task held back" list=`+list+` task=`+id+` `)
}

// TestQueue_PauseAll: with everything paused, 20 tasks submitted are
// each held back and none starts; resumed, all of them run.
func TestQueue_PauseAll(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	h.setPause(func(r *pausefile.Record) {
		r.Set(pausefile.Scope{Kind: pausefile.All}, pausefile.Pause{By: pausefile.ByPerson, Reason: "demo", Since: time.Now()})
	})
	h.waitFor("the pause to be read", 10*time.Second, func() bool { return strings.Contains(h.logs.String(), `msg=paused what=everything`) })
	var ids []string
	for i := 1; i <= 20; i++ {
		id := strconv.Itoa(i)
		ids = append(ids, id)
		h.drop("l", id, execTask("task "+id, "true"))
	}
	for _, id := range ids {
		h.waitFor("task "+id+" held back", 10*time.Second, func() bool { return h.heldBack("l", id) })
	}
	for _, id := range ids {
		if tf := h.read("l", id); stateOf(tf) != task.None {
			t.Fatalf("task %s is %s while everything is paused", id, stateOf(tf))
		}
	}
	if n := countEvents(h.events("l"), eventlog.TaskStarted, ""); n != 0 {
		t.Fatalf("%d tasks started while everything was paused", n)
	}
	h.setPause(func(r *pausefile.Record) { r.Lift(pausefile.Scope{Kind: pausefile.All}) })
	for _, id := range ids {
		h.waitState("l", id, task.Succeeded, 30*time.Second)
	}
}

// TestQueue_PauseStop: a list paused with stop interrupts its running
// agent, whose task waits, pending, until the list is resumed, and then
// runs again; a task of another list goes on.
func TestQueue_PauseStop(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l", "o"})
	dir := t.TempDir()
	mark := filepath.Join(dir, "runs")
	wait, release := untilReleased(t, dir, "l1")
	h.drop("l", "1", execTask("long", "echo run >> "+mark+"; "+wait))
	// The agent has run its first command: the stop interrupts a run
	// that counts, not a shell killed before it began.
	h.waitFor("the agent to start", 20*time.Second, func() bool { return agentStarted(h, "l", "1") && readString(dir, "runs") == "run\n" })
	h.setPause(func(r *pausefile.Record) {
		r.Set(pausefile.Scope{Kind: pausefile.List, Name: "l"}, pausefile.Pause{By: pausefile.ByPerson, Since: time.Now(), Stop: true})
	})
	h.waitEvents("l", eventlog.TaskInterrupted, "1", 1)
	h.waitFor("task 1 held back", 10*time.Second, func() bool { return h.heldBack("l", "1") })
	h.settled("o", "c")
	if tf := h.read("l", "1"); stateOf(tf) != task.None {
		t.Fatalf("the interrupted task is %s while its list is paused", stateOf(tf))
	}
	release()
	h.setPause(func(r *pausefile.Record) { r.Lift(pausefile.Scope{Kind: pausefile.List, Name: "l"}) })
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	if got := ran(t, mark); len(got) != 2 {
		t.Errorf("the agent ran %d times, want 2 (interrupted, then again)", len(got))
	}
}
