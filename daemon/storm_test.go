package daemon_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/waitfor"
	"github.com/taskd/taskd/taskfile"
)

// stormWorkflowJSON forks into two branches (one of two steps) and joins;
// every step leaves a mark.
const stormWorkflowJSON = `{"id": "storm", "name": "storm", "nodes": {
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

// stormSize returns the number of tasks and kills, and the seed: the
// build's defaults (stormTasks, stormKills, a random seed), or
// TASKD_STORM_TASKS, TASKD_STORM_KILLS (0: a run without kills, to
// compare with) and TASKD_STORM_SEED (the same seed makes the same tasks).
func stormSize(t *testing.T) (tasks, kills int, seed uint64) {
	tasks, kills = stormTasks, stormKills
	for _, v := range []struct {
		env string
		n   *int
		min int
	}{{"TASKD_STORM_TASKS", &tasks, 1}, {"TASKD_STORM_KILLS", &kills, 0}} {
		if s := os.Getenv(v.env); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < v.min {
				t.Fatalf("%s=%q: want a whole number, at least %d", v.env, s, v.min)
			}
			*v.n = n
		}
	}
	seed = rand.Uint64()
	if s := os.Getenv("TASKD_STORM_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("TASKD_STORM_SEED=%q: %v", s, err)
		}
	}
	return tasks, kills, seed
}

// The kinds of task of the storm, by id (i % 50): most are plain, some
// blocked by earlier ones (i % 7 == 0); the others:
const (
	stormLoop      = 10 // a loop of at most 4 runs, ended by its untilCommand after 3
	stormPushLines = 15 // leading /push and /run lines: two children, then the agent
	stormWorkflow  = 25 // the fork workflow
	stormPushCLI   = 40 // the agent pushes two children (taskd push, taskd run) and is resumed with their results
)

// stormTask returns task i of the storm, its kind, and whether it is
// blocked by i-1 and i-3. Every agent run appends its attempt to the mark
// file named by its task's id (a workflow's steps: a line in "steps").
func stormTask(rng *rand.Rand, i int, marks string) (content string, kind int, blocked bool) {
	id := strconv.Itoa(i)
	mark := fmt.Sprintf(`echo $TASKD_ATTEMPT >> %s/$TASKD_TASK_ID`, marks)
	switch i % 50 {
	case stormWorkflow:
		return flowTask(id, "storm", "storm "+id, ""), stormWorkflow, false
	case stormLoop:
		return execTask("loop "+id, mark, "taskd.loop", fmt.Sprintf(`{"max": 4, "untilCommand": "test $(wc -l < %s/%s) -ge 3"}`, marks, id)), stormLoop, false
	case stormPushLines:
		child := fmt.Sprintf(`/push name=%%s agent=exec "%s"`, strings.ReplaceAll(mark, `"`, `\"`))
		return execTask("pushes "+id, fmt.Sprintf(child, "a")+"\n"+fmt.Sprintf(child, "b")+"\n/run\n"+mark), stormPushLines, false
	case stormPushCLI:
		script := mark + `; if [ -n "$TASKD_RESULTS" ]; then exit 0; fi; ` +
			fmt.Sprintf(`taskd push name=a "%[1]s" && taskd push name=b "%[1]s; sleep 0.05" && taskd run`, strings.ReplaceAll(mark, "$", `\$`))
		return execTask("parent "+id, script), stormPushCLI, false
	}
	// Some runs last long enough for a kill to land while they run.
	script := mark
	if rng.IntN(4) == 0 {
		script += "; sleep 0.0" + strconv.Itoa(1+rng.IntN(9))
	}
	var extra []string
	if i%7 == 0 && i > 3 {
		extra = []string{"blockedBy", fmt.Sprintf(`["%d", "%d"]`, i-1, i-3)}
		blocked = true
	}
	return execTask("storm "+id, script, extra...), 0, blocked
}

// TestCrashStorm runs tasks of every kind — plain exec tasks (some blocked
// by others), loops ended by an untilCommand, parents that push children
// (leading /push lines, or taskd push and taskd run from the agent) and
// are resumed with their results, workflows with a fork — while the
// daemon is killed with SIGKILL at moments chosen at random and
// restarted. Afterwards no task is lost (every task, children included,
// succeeded; a child is cancelled only if its parent ended without ever
// starting it), every task file parses, no event line is torn, nothing
// started again after it had succeeded, no fork branch was made twice,
// every re-run of an agent is explained by an interrupted attempt, and no
// attempt ran twice. It logs the agents started per task, which bench/
// crash.sh compares with a run of the same seed without kills. Without
// the stress tag it is a short storm; with it (go test -tags stress, or
// bench/crash.sh) 1,000 tasks and 30 kills.
func TestCrashStorm(t *testing.T) {
	t.Parallel()
	n, kills, seed := stormSize(t)
	root := newRoot(t, "s")
	list := filepath.Join(root, "s")
	marks := t.TempDir()
	os.MkdirAll(filepath.Join(list, ".taskd", "workflows"), 0o755)
	os.WriteFile(filepath.Join(list, ".taskd", "workflows", "storm.json"), []byte(strings.ReplaceAll(stormWorkflowJSON, "MARKS", marks)), 0o644)
	h := &harness{t: t, root: root, logs: &syncBuffer{}}
	rng := rand.New(rand.NewPCG(seed, 2))
	t.Logf("storm: %d tasks, %d kills, seed %d", n, kills, seed)

	kinds := map[string]int{}
	var blocked []string
	for i := 1; i <= n; i++ {
		content, kind, b := stormTask(rng, i, marks)
		id := strconv.Itoa(i)
		kinds[id] = kind
		if b {
			blocked = append(blocked, id)
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

	taskdBinary(t) // for the agents' taskd push and taskd run
	start := time.Now()
	p := startDaemonProc(t, root, 2)
	var logs strings.Builder
	for k := 1; k <= kills; k++ {
		// Let the daemon make some progress, then kill it: half the time
		// right after a task succeeded, half the time right after an agent
		// started (a mark written), so kills land in every phase.
		done := succeededEvents(list)
		target := done + 1 + rng.IntN(max(1, 2*n/(kills+1)))
		if !waitUntilOrTimeout(stormPatience, func() bool { return succeededEvents(list) >= target || allTerminal(list) }) {
			t.Fatalf("kill %d: %d tasks did not succeed; those not ended:\n%s\nthe daemon's log:\n%s", k, target, unended(t, h, list), p.log)
		}
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
	if !waitUntilOrTimeout(stormPatience, func() bool { return allTerminal(list) }) {
		t.Fatalf("not every task ended:\n%s\nthe last daemon's log:\n%s", unended(t, h, list), p.log)
	}
	elapsed := time.Since(start)
	// The last daemon may have nothing left to do; it is stopped once it
	// is up (it handles SIGTERM from then on). (A daemon killed as soon as
	// it started may have logged no DaemonStarted event: its own log says
	// when it is up.)
	h.waitFor("the last daemon to start", time.Minute, func() bool {
		return strings.Contains(p.log.String(), "taskd started")
	})
	p.term(t)
	logs.WriteString(p.log.String())
	checkStorm(t, h, stormRun{list: list, marks: marks, kinds: kinds, blocked: blocked, kills: kills, elapsed: elapsed, logs: logs.String()})
}

// unended describes the tasks of list that have not ended, with their
// events.
func unended(t *testing.T, h *harness, list string) string {
	var b strings.Builder
	evs := mustEvents(list)
	for _, id := range mustList(t, list) {
		tf := h.read("s", id)
		switch s := stateOf(tf); s {
		case task.Succeeded, task.Failed, task.Cancelled, task.TimedOut, task.Stopped:
		default:
			fmt.Fprintf(&b, "%s: %s %q %s\n%s", id, tf.Status, s, tdString(tf, "error"), eventsOf(evs, id))
		}
	}
	return b.String()
}

// mustEvents reads list's event log, as much of it as reads.
func mustEvents(list string) []eventlog.Event {
	evs, _ := eventlog.Read(list)
	return evs
}

// succeededEvents counts TaskSucceeded lines in the list's event log.
func succeededEvents(list string) int {
	data, _ := os.ReadFile(filepath.Join(list, ".taskd", "events.jsonl"))
	return bytes.Count(data, []byte(`"type":"TaskSucceeded"`))
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
	return waitfor.WithinEvery(timeout, time.Millisecond, cond)
}

// stormPatience bounds each wait of the storm for the daemon's progress.
const stormPatience = 3 * time.Minute
