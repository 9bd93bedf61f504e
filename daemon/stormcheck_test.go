package daemon_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
)

// stormRun is what a crash storm left, to check.
type stormRun struct {
	list, marks string
	kinds       map[string]int // the dropped tasks' kinds (stormTask)
	blocked     []string       // the dropped tasks blocked by others
	kills       int
	elapsed     time.Duration
	logs        string // the daemons' logs
}

// checkStorm checks what must hold after a crash storm (TestCrashStorm)
// and logs its figures.
func checkStorm(t *testing.T, h *harness, r stormRun) {
	t.Helper()
	evs, err := eventlog.Read(r.list)
	if err != nil {
		t.Fatalf("a torn or unreadable event line: %v", err)
	}
	ids, err := mustDir(t, r.list).List()
	if err != nil {
		t.Fatal(err)
	}
	interruptedBy := map[string]int{}
	for _, e := range evs {
		if e.Type == eventlog.TaskInterrupted {
			interruptedBy[e.Task]++
		}
	}
	count := map[string]int{}
	branches := map[string]int{} // parent/branch → child tasks made for it
	reruns, unstarted := 0, 0
	for _, id := range ids {
		tf := h.read("s", id)
		m := tf.Metadata.Object("taskd")
		kind, dropped := r.kinds[id]
		parent, _ := m.String("parent")
		switch {
		case !dropped && tf.Metadata.Has("parentTaskId"):
			p, _ := tf.Metadata.String("parentTaskId")
			b, _ := tf.Metadata.String("branchName")
			branches[p+"/"+b]++
			count["fork children"]++
			kind = stormWorkflow
		case !dropped && parent != "":
			count["children"]++
		case kind == stormPushCLI || kind == stormPushLines:
			count["parents"]++
		case kind == stormLoop:
			count["loops"]++
		case kind == stormWorkflow:
			count["workflows"]++
		default:
			count["plain"]++
		}
		// Every agent run left its attempt in the task's mark file.
		runs := strings.Fields(readString(r.marks, id))
		// No task is lost: each succeeded, but for a child its parent
		// ended without starting (it never ran).
		s := stateOf(tf)
		if s == task.Cancelled && !dropped && parent != "" && len(runs) == 0 && strings.Contains(tdString(tf, "error"), "without starting it") {
			continue
		}
		if s != task.Succeeded {
			t.Errorf("task %s ended %q (status %q): %s", id, s, tf.Status, tdString(tf, "error"))
		}
		if kind == stormWorkflow {
			continue // its steps leave lines in "steps"
		}
		// No attempt ran twice, and the last to run is the one recorded.
		attempt, _ := m.Int("attempt")
		if len(runs) == 0 || runs[len(runs)-1] != strconv.Itoa(int(attempt)) {
			t.Errorf("task %s: runs %v, but the file says attempt %d succeeded", id, runs, attempt)
		}
		if !slices.IsSortedFunc(runs, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y }) || len(slices.Compact(slices.Clone(runs))) != len(runs) {
			t.Errorf("task %s: attempts ran out of order or twice: %v", id, runs)
		}
		if kind == 0 { // a plain task or a child: one attempt unless interrupted
			if got := interruptedBy[id]; got < int(attempt)-1 {
				t.Errorf("task %s: %d attempts but %d TaskInterrupted events", id, attempt, got)
			}
			reruns += len(runs) - 1
			unstarted += int(attempt) - len(runs)
		}
	}
	// Nothing starts again for a task after it succeeded.
	succeededAt := map[string]int{}
	again := map[string]bool{}
	for i, e := range evs {
		switch e.Type {
		case eventlog.TaskSucceeded:
			if _, ok := succeededAt[e.Task]; !ok {
				succeededAt[e.Task] = i
			}
		case eventlog.TaskStarted, eventlog.StepStarted:
			if at, ok := succeededAt[e.Task]; ok {
				again[e.Task] = true
				t.Errorf("task %s started again (event %d, %s) after it succeeded (event %d)", e.Task, i, e.Type, at)
			}
		}
	}
	checkBlockedOrder(t, h, evs, r.blocked)
	var twice []string
	for pb, n := range branches {
		if n > 1 {
			twice = append(twice, fmt.Sprintf("%s ×%d", pb, n))
		}
	}
	slices.Sort(twice)
	if len(twice) > 0 {
		// A branch made again runs its steps again.
		t.Errorf("fork branches made more than once (parent/branch): %s", strings.Join(twice, ", "))
	}

	agents := markCount(r.marks)
	recovered := strings.Count(r.logs, "recording the result of an attempt that ended while the daemon was down")
	t.Logf("storm: %d tasks (%d plain, %d blocked, %d loops, %d parents with %d children, %d workflows with %d fork children), %d kills in %s",
		len(ids), count["plain"], len(r.blocked), count["loops"], count["parents"], count["children"], count["workflows"], count["fork children"], r.kills, r.elapsed.Round(time.Millisecond))
	t.Logf("storm: %d TaskInterrupted events, %d re-runs of an agent, %d interrupted before the agent started, %d results recovered from run folders, %d event lines, 0 torn",
		countEvents(evs, eventlog.TaskInterrupted, ""), reruns, unstarted, recovered, len(evs))
	// The figures bench/crash.sh compares (keep the wording: it reads
	// them).
	t.Logf("storm: agents started: %d for %d tasks, %.2f per task, with %d kills", agents, len(ids), float64(agents)/float64(len(ids)), r.kills)
	t.Logf("storm: tasks run again after finishing: %d", len(again))
}

// checkBlockedOrder checks that the blocked tasks started after their
// blockers (i-1 and i-3) had finished: a task's first TaskStarted is
// later than each blocker's finishedAt. (The order of the events
// themselves proves nothing: a blocker's TaskSucceeded is appended after
// its file says completed, and the dependent may start in between.)
func checkBlockedOrder(t *testing.T, h *harness, evs []eventlog.Event, blocked []string) {
	t.Helper()
	firstStart := map[string]time.Time{}
	for _, e := range evs {
		if _, ok := firstStart[e.Task]; !ok && e.Type == eventlog.TaskStarted {
			firstStart[e.Task] = e.TS
		}
	}
	for _, id := range blocked {
		n, _ := strconv.Atoi(id)
		for _, b := range []int{n - 1, n - 3} {
			bid := strconv.Itoa(b)
			s, _ := h.read("s", bid).Metadata.Object("taskd").String("finishedAt")
			finished, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				t.Errorf("blocker %s: finishedAt %q: %v", bid, s, err)
				continue
			}
			if started, ok := firstStart[id]; ok && started.Before(finished) {
				t.Errorf("task %s started at %s, before its blocker %s finished at %s", id, started.Format(time.RFC3339Nano), bid, s)
			}
		}
	}
}

// markCount counts the agent runs recorded in the mark files.
func markCount(marks string) int {
	n := 0
	for _, name := range readDirNames(marks) {
		data, _ := os.ReadFile(filepath.Join(marks, name))
		n += strings.Count(string(data), "\n")
	}
	return n
}
