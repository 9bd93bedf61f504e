package daemon_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// stormWorkflow forks into two branches (one of two steps) and joins;
// every step leaves a mark.
const stormWorkflow = `{"id": "storm", "name": "storm", "nodes": {
  "start": {"type": "start"},
  "fork": {"type": "fork", "name": "Fan out", "join": "join", "branches": {
     "a": {"entryStep": "a1"}, "b": {"entryStep": "b1"}}},
  "a1": {"type": "task", "name": "A", "command": "echo $TASKD_TASK_ID a1 >> MARKS/steps"},
  "b1": {"type": "task", "name": "B1", "command": "echo $TASKD_TASK_ID b1 >> MARKS/steps"},
  "b2": {"type": "task", "name": "B2", "command": "echo $TASKD_TASK_ID b2 >> MARKS/steps"},
  "join": {"type": "join", "name": "Join", "fork": "fork", "strategy": "all-pass"},
  "after": {"type": "task", "name": "After", "command": "echo $TASKD_TASK_ID after >> MARKS/steps"},
  "end": {"type": "end", "result": "success"},
  "hitl": {"type": "end", "result": "blocked", "escalation": "hitl", "name": "Branches failed"}},
 "edges": [
  {"from": "start", "to": "fork"},
  {"from": "a1", "to": "join"}, {"from": "b1", "to": "b2"}, {"from": "b2", "to": "join"},
  {"from": "join", "to": "after", "on": "passed"}, {"from": "join", "to": "hitl", "on": "failed"},
  {"from": "after", "to": "end"}]}`

// stormSize returns the number of tasks and kills: the build's defaults
// (stormTasks, stormKills), or TASKD_STORM_TASKS and TASKD_STORM_KILLS.
func stormSize(t *testing.T) (tasks, kills int) {
	tasks, kills = stormTasks, stormKills
	for _, v := range []struct {
		env string
		n   *int
	}{{"TASKD_STORM_TASKS", &tasks}, {"TASKD_STORM_KILLS", &kills}} {
		if s := os.Getenv(v.env); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				t.Fatalf("%s=%q: want a positive number", v.env, s)
			}
			*v.n = n
		}
	}
	return tasks, kills
}

// TestCrashStorm runs exec tasks (some blocked by others, some walking a
// workflow with a fork) while the daemon is killed with SIGKILL at moments
// chosen at random and restarted. Afterwards every task is in a terminal
// state, every task file parses, no event line is torn, no task ran again
// after it succeeded, no fork branch was made twice, and every re-run is
// explained by an interrupted attempt in the events. Without the stress tag it is a short storm; with
// it (go test -tags stress, or bench/crash.sh) 1,000 tasks and 20 kills.
func TestCrashStorm(t *testing.T) {
	t.Parallel()
	n, kills := stormSize(t)
	root := newRoot(t, "s")
	list := filepath.Join(root, "s")
	marks := t.TempDir()
	os.MkdirAll(filepath.Join(list, ".taskd", "workflows"), 0o755)
	os.WriteFile(filepath.Join(list, ".taskd", "workflows", "storm.json"), []byte(strings.ReplaceAll(stormWorkflow, "MARKS", marks)), 0o644)
	h := &harness{t: t, root: root, logs: &syncBuffer{}}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	seed := rng.Uint64()
	rng = rand.New(rand.NewPCG(seed, 2))
	t.Logf("storm: %d tasks, %d kills, seed %d", n, kills, seed)

	var plain, blocked, flows []string
	for i := 1; i <= n; i++ {
		id := strconv.Itoa(i)
		var content string
		switch {
		case i%50 == 25:
			content = flowTask(id, "storm", "storm "+id, "")
			flows = append(flows, id)
		default:
			// Each run appends its attempt to the task's mark file; some
			// runs last long enough for a kill to land while they run.
			script := fmt.Sprintf(`echo $TASKD_ATTEMPT >> %s/%s`, marks, id)
			if rng.IntN(4) == 0 {
				script += "; sleep 0.0" + strconv.Itoa(1+rng.IntN(9))
			}
			var extra []string
			if i%7 == 0 && i > 3 {
				extra = []string{"blockedBy", fmt.Sprintf(`["%d", "%d"]`, i-1, i-3)}
				blocked = append(blocked, id)
			}
			content = execTask("storm "+id, script, extra...)
			plain = append(plain, id)
		}
		os.WriteFile(filepath.Join(list, "."+id+".drop"), []byte(content), 0o644)
	}
	// Drop all of them at once, as a producer would, before the first start.
	for i := 1; i <= n; i++ {
		id := strconv.Itoa(i)
		if err := os.Rename(filepath.Join(list, "."+id+".drop"), filepath.Join(list, id+".json")); err != nil {
			t.Fatal(err)
		}
	}

	start := time.Now()
	p := startDaemonProc(t, root, 2)
	var logs strings.Builder
	for k := 1; k <= kills; k++ {
		// Let the daemon make some progress, then kill it: half the time
		// right after a task succeeded, half the time right after an agent
		// started (a mark written), so kills land in every phase.
		done := succeededEvents(list)
		target := done + 1 + rng.IntN(max(1, 2*n/(kills+1)))
		h.waitFor(fmt.Sprintf("kill %d: %d tasks to succeed", k, target), 5*time.Minute, func() bool {
			return succeededEvents(list) >= target || allTerminal(list)
		})
		if rng.IntN(2) == 0 {
			before := markCount(marks)
			waitUntilOrTimeout(2*time.Second, func() bool { return markCount(marks) > before })
		}
		p.kill(t)
		logs.WriteString(p.log.String())
		for _, name := range readDirNames(list) {
			if id, ok := strings.CutSuffix(name, ".json"); ok && taskfile.ValidID(id) {
				if _, err := taskfile.ReadFile(filepath.Join(list, name)); err != nil {
					t.Fatalf("after kill %d: %v", k, err)
				}
			}
		}
		p = startDaemonProc(t, root, 2)
	}
	h.waitFor("every task to end", 10*time.Minute, func() bool { return allTerminal(list) })
	elapsed := time.Since(start)
	// The last daemon may have nothing left to do; it is stopped once it
	// is up (it handles SIGTERM from then on).
	h.waitFor("the last daemon to start", time.Minute, func() bool {
		data, _ := os.ReadFile(filepath.Join(list, ".taskd", "events.jsonl"))
		return bytes.Count(data, []byte(`"type":"DaemonStarted"`)) >= kills+1
	})
	p.term(t)
	logs.WriteString(p.log.String())

	evs, err := eventlog.Read(list)
	if err != nil {
		t.Fatalf("a torn or unreadable event line: %v", err)
	}
	// Every task file parses and is terminal; children of the workflows
	// too.
	ids, err := mustDir(t, list).List()
	if err != nil {
		t.Fatal(err)
	}
	kids := 0
	branches := map[string]int{} // parent/branch → child tasks made for it
	for _, id := range ids {
		tf := h.read("s", id)
		if p, ok := tf.Metadata.String("parentTaskId"); ok {
			kids++
			b, _ := tf.Metadata.String("branchName")
			branches[p+"/"+b]++
		}
		if s := stateOf(tf); s != task.Succeeded {
			t.Errorf("task %s ended %q (status %q), want succeeded", id, s, tf.Status)
		}
	}

	// A plain task ran once per attempt at most, and every attempt after
	// the first is explained by a TaskInterrupted event.
	reruns, unstarted := 0, 0
	interruptedBy := map[string]int{}
	for _, e := range evs {
		if e.Type == eventlog.TaskInterrupted {
			interruptedBy[e.Task]++
		}
	}
	for _, id := range plain {
		tf := h.read("s", id)
		attempt, _ := tf.Metadata.Object("taskd").Int("attempt")
		data, _ := os.ReadFile(filepath.Join(marks, id))
		runs := strings.Fields(string(data))
		if len(runs) == 0 || runs[len(runs)-1] != strconv.Itoa(int(attempt)) {
			t.Errorf("task %s: runs %v, but the file says attempt %d succeeded", id, runs, attempt)
		}
		if !slices.IsSortedFunc(runs, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y }) || len(slices.Compact(slices.Clone(runs))) != len(runs) {
			t.Errorf("task %s: attempts ran out of order or twice: %v", id, runs)
		}
		if got := interruptedBy[id]; got < int(attempt)-1 {
			t.Errorf("task %s: %d attempts but %d TaskInterrupted events", id, attempt, got)
		}
		reruns += len(runs) - 1
		unstarted += int(attempt) - len(runs)
	}
	// Nothing starts again for a task after it succeeded.
	succeededAt := map[string]int{}
	for i, e := range evs {
		switch e.Type {
		case eventlog.TaskSucceeded:
			if _, ok := succeededAt[e.Task]; !ok {
				succeededAt[e.Task] = i
			}
		case eventlog.TaskStarted, eventlog.StepStarted:
			if at, ok := succeededAt[e.Task]; ok {
				t.Errorf("task %s started again (event %d, %s) after it succeeded (event %d)", e.Task, i, e.Type, at)
			}
		}
	}
	// The blocked tasks started after their blockers had finished: a
	// task's first TaskStarted is later than each blocker's finishedAt.
	// (The order of the events themselves proves nothing: a blocker's
	// TaskSucceeded is appended after its file says completed, and the
	// dependent may start in between.)
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
	recovered := strings.Count(logs.String(), "recording the result of an attempt that ended while the daemon was down")
	t.Logf("storm: %d tasks (%d plain, %d blocked, %d workflows with %d fork children), %d kills in %s",
		len(ids), len(plain), len(blocked), len(flows), kids, kills, elapsed.Round(time.Millisecond))
	t.Logf("storm: %d TaskInterrupted events, %d re-runs of an agent, %d interrupted before the agent started, %d results recovered from run folders, %d event lines, 0 torn",
		countEvents(evs, eventlog.TaskInterrupted, ""), reruns, unstarted, recovered, len(evs))
}

// succeededEvents counts TaskSucceeded lines in the list's event log.
func succeededEvents(list string) int {
	data, _ := os.ReadFile(filepath.Join(list, ".taskd", "events.jsonl"))
	return bytes.Count(data, []byte(`"type":"TaskSucceeded"`))
}

// markCount counts the agent runs recorded in the mark files.
func markCount(marks string) int {
	n := 0
	for _, name := range readDirNames(marks) {
		data, _ := os.ReadFile(filepath.Join(marks, name))
		n += bytes.Count(data, []byte("\n"))
	}
	return n
}

// allTerminal reports whether every task file of list has a terminal state.
func allTerminal(list string) bool {
	for _, name := range readDirNames(list) {
		id, ok := strings.CutSuffix(name, ".json")
		if !ok || !taskfile.ValidID(id) {
			continue
		}
		tf, err := taskfile.ReadFile(filepath.Join(list, name))
		if err != nil {
			return false
		}
		switch stateOf(tf) {
		case task.Succeeded, task.Failed, task.Cancelled, task.TimedOut, task.Stopped:
		default:
			return false
		}
	}
	return true
}

func readDirNames(dir string) []string {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	return names
}

// waitUntilOrTimeout polls cond until it holds or the time is up, and
// reports which.
func waitUntilOrTimeout(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}
