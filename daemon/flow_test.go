package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// addWorkflow writes a workflow into a list's .taskd/workflows directory.
func (h *harness) addWorkflow(list, id, content string) {
	h.t.Helper()
	dir := filepath.Join(h.listDir(list), ".taskd", "workflows")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, id+".json"), []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// flowTask is a task file as flow's /flow:task-create writes it, owned by
// taskd.
func flowTask(id, workflow, desc string, extraTaskd string) string {
	td := ""
	if extraTaskd != "" {
		td = `, "taskd": ` + extraTaskd
	}
	return `{"id": "` + id + `", "subject": "#` + id + ` ` + desc + `", "description": "", "activeForm": "Starting", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": [],
  "metadata": {"userDescription": "` + desc + `", "workflowType": "` + workflow + `", "currentStep": "", "retryCount": 0` + td + `}}`
}

// gateWorkflow: implement (a command) → test gate (a command that passes on
// its third run) with maxRetries as given → done; retries go back to
// implement, escalation to a human step that resumes at implement.
func gateWorkflow(counter string, passOn, maxRetries int) string {
	return `{"id": "gate", "name": "gate", "nodes": {
  "start": {"type": "start"},
  "implement": {"type": "task", "name": "Implement", "command": "echo implementing"},
  "test": {"type": "gate", "name": "Test", "maxRetries": ` + itoa(maxRetries) + `,
           "command": "n=$(cat ` + counter + ` 2>/dev/null || echo 0); n=$((n+1)); echo $n > ` + counter + `; test $n -ge ` + itoa(passOn) + `"},
  "end": {"type": "end", "result": "success"},
  "hitl": {"type": "end", "result": "blocked", "escalation": "hitl", "name": "Tests keep failing", "description": "Fix the tests by hand."}},
 "edges": [
  {"from": "start", "to": "implement"},
  {"from": "implement", "to": "test"},
  {"from": "test", "to": "end", "on": "passed"},
  {"from": "test", "to": "implement", "on": "failed"},
  {"from": "test", "to": "hitl", "on": "failed"},
  {"from": "hitl", "to": "implement", "on": "passed"}]}`
}

func itoa(n int) string { return strconv.Itoa(n) }

func steps(t *taskfile.Task) string {
	v, _ := t.Metadata.Object("taskd").Get("stepTrace")
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		o := e.(*taskfile.Object)
		s, _ := o.String("step")
		r, _ := o.String("result")
		a, _ := o.String("action")
		out = append(out, s+":"+r+":"+a)
	}
	return strings.Join(out, " ")
}

func TestFlow_CommandGateRetriesThenPasses(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	counter := filepath.Join(t.TempDir(), "count")
	h.addWorkflow("l", "gate", gateWorkflow(counter, 3, 3))
	h.drop("l", "1", flowTask("1", "gate", "Make the tests pass", ""))
	tf := h.waitState("l", "1", task.Succeeded, 20*time.Second)
	if got, want := steps(tf), "implement:passed:advance test:failed:retry implement:passed:advance test:failed:retry implement:passed:advance test:passed:advance"; got != want {
		t.Errorf("steps\n got %s\nwant %s", got, want)
	}
	if tf.Status != taskfile.StatusCompleted || tf.Subject != "#1 Make the tests pass\n→ gate · completed ✓" {
		t.Errorf("status %q subject %q", tf.Status, tf.Subject)
	}
	evs := h.waitEvents("l", eventlog.TaskSucceeded, "1", 1)
	if got := countEvents(evs, eventlog.StepStarted, "1"); got != 6 {
		t.Errorf("%d StepStarted events, want 6", got)
	}
	// Each step ran in its own run folder.
	for n := 1; n <= 6; n++ {
		if _, err := os.Stat(filepath.Join(h.listDir("l"), ".taskd", "runs", "1", itoa(n), "result.json")); err != nil {
			t.Errorf("run %d: %v", n, err)
		}
	}
}

func TestFlow_EscalatesToHumanAndResumes(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	counter := filepath.Join(t.TempDir(), "count")
	// Passes only on the 5th run, but maxRetries 1 escalates after 2 failures.
	h.addWorkflow("l", "gate", gateWorkflow(counter, 5, 1))
	h.drop("l", "1", flowTask("1", "gate", "Flaky", ""))
	tf := h.waitState("l", "1", task.NeedsHuman, 20*time.Second)
	hitl := tf.Metadata.Object("taskd").Object("hitl")
	reason, _ := hitl.String("reason")
	if !strings.Contains(reason, "max retries exceeded at test") || !strings.Contains(reason, "Tests keep failing") {
		t.Errorf("hitl reason = %q", reason)
	}
	if tf.Status != taskfile.StatusPending || currentStepOf(tf) != "hitl" {
		t.Errorf("status %q step %q", tf.Status, currentStepOf(tf))
	}
	h.waitEvents("l", eventlog.TaskNeedsHuman, "1", 1)

	// A person answers by editing the file: passed resumes at implement.
	// The test still fails twice more (runs 3 and 4), then escalates again;
	// the second answer gets it through (run 5 passes).
	for i := 0; i < 2; i++ {
		dir, _ := taskfile.Open(h.listDir("l"))
		if _, err := dir.Update(context.Background(), "1", func(t *taskfile.Task) error {
			t.Metadata.Object("taskd").Set("resolve", "passed")
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			h.waitEvents("l", eventlog.TaskNeedsHuman, "1", 2)
		}
	}
	tf = h.waitState("l", "1", task.Succeeded, 20*time.Second)
	if got := countEvents(h.waitEvents("l", eventlog.HumanResolved, "1", 2), eventlog.HumanResolved, "1"); got != 2 {
		t.Errorf("%d HumanResolved events", got)
	}
	if _, ok := tf.Metadata.Object("taskd").Get("hitl"); ok {
		t.Errorf("hitl not cleared after resolution")
	}
}

func currentStepOf(t *taskfile.Task) string { s, _ := t.Metadata.String("currentStep"); return s }

func TestFlow_LoopGuard(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	// c always fails and retries through b, whose passed edge resets the
	// task's one retry count (flow's rule), so c never escalates.
	h.addWorkflow("l", "spin", `{"id": "spin", "name": "spin", "nodes": {
  "start": {"type": "start"},
  "a": {"type": "task", "name": "A", "command": "true"},
  "b": {"type": "gate", "name": "B", "command": "true"},
  "c": {"type": "gate", "name": "C", "command": "false", "maxRetries": 1},
  "end": {"type": "end", "result": "success"},
  "hitl": {"type": "end", "result": "blocked", "escalation": "hitl"}},
 "edges": [{"from": "start", "to": "a"}, {"from": "a", "to": "b"}, {"from": "b", "to": "c", "on": "passed"}, {"from": "b", "to": "hitl", "on": "failed"},
  {"from": "c", "to": "end", "on": "passed"}, {"from": "c", "to": "a", "on": "failed"}, {"from": "c", "to": "hitl", "on": "failed"}]}`)
	h.drop("l", "1", flowTask("1", "spin", "Spin forever", ""))
	tf := h.waitState("l", "1", task.NeedsHuman, 30*time.Second)
	if n, _ := tf.Metadata.Object("taskd").Int("iteration"); n != 25 {
		t.Errorf("paused after %d steps, want 25", n)
	}
	opts, _ := tf.Metadata.Object("taskd").Object("hitl").Get("options")
	if len(opts.([]any)) != 3 {
		t.Errorf("options = %v", opts)
	}
	dir, _ := taskfile.Open(h.listDir("l"))
	if _, err := control.Resolve(context.Background(), dir, "1", "continue"); err != nil {
		t.Fatal(err)
	}
	tf = h.waitState("l", "1", task.Stopped, 30*time.Second)
	if n, _ := tf.Metadata.Object("taskd").Int("iteration"); n != 50 {
		t.Errorf("stopped after %d steps, want 50", n)
	}
	if tf.Status != taskfile.StatusInProgress {
		t.Errorf("hard stop left status %q, want in_progress", tf.Status)
	}
	evs := h.waitEvents("l", eventlog.GuardStopped, "1", 1)
	if got := countEvents(evs, eventlog.GuardWarning, "1"); got != 1 {
		t.Errorf("%d GuardWarning events", got)
	}
	// A wrong answer is refused with the accepted ones.
	if _, err := control.Resolve(context.Background(), dir, "1", "continue"); err == nil || !strings.Contains(err.Error(), "does not wait") {
		t.Errorf("resolve of a stopped task: %v", err)
	}
}

// forkWorkflow: a fork with three branches (b is two steps long) whose
// commands pass or fail as given, joined with strategy.
func forkWorkflow(strategy, aCmd, b1Cmd, b2Cmd, cCmd string) string {
	return `{"id": "fan", "name": "fan", "nodes": {
  "start": {"type": "start"},
  "fork": {"type": "fork", "name": "Fan out", "join": "join", "branches": {
     "a": {"entryStep": "a1", "description": "branch a"},
     "b": {"entryStep": "b1"},
     "c": {"entryStep": "c1"}}},
  "a1": {"type": "task", "name": "A", "command": "` + aCmd + `"},
  "b1": {"type": "task", "name": "B1", "command": "` + b1Cmd + `"},
  "b2": {"type": "task", "name": "B2", "command": "` + b2Cmd + `"},
  "c1": {"type": "task", "name": "C", "command": "` + cCmd + `"},
  "join": {"type": "join", "name": "Join", "fork": "fork", "strategy": "` + strategy + `"},
  "after": {"type": "task", "name": "After", "command": "true"},
  "end": {"type": "end", "result": "success"},
  "hitl": {"type": "end", "result": "blocked", "escalation": "hitl", "name": "Branches failed"}},
 "edges": [
  {"from": "start", "to": "fork"},
  {"from": "a1", "to": "join"},
  {"from": "b1", "to": "b2"},
  {"from": "b2", "to": "join"},
  {"from": "c1", "to": "join"},
  {"from": "join", "to": "after", "on": "passed"},
  {"from": "join", "to": "hitl", "on": "failed"},
  {"from": "after", "to": "end"}]}`
}

func TestFlow_ForkJoin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, strategy string
		c              string     // branch c's command
		want           task.State // parent's final state
	}{
		{"all-pass with a failing branch", "all-pass", "false", task.NeedsHuman},
		{"any-pass with a failing branch", "any-pass", "false", task.Succeeded},
		{"all-pass, all pass", "all-pass", "true", task.Succeeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startDaemon(t, []string{"l"})
			h.addWorkflow("l", "fan", forkWorkflow(tt.strategy, "true", "true", "true", tt.c))
			h.drop("l", "1", flowTask("1", "fan", "Fan out", ""))
			defer func() {
				if t.Failed() {
					for _, id := range mustList(t, h.listDir("l")) {
						data, _ := os.ReadFile(filepath.Join(h.listDir("l"), id+".json"))
						t.Logf("%s: %s", id, data)
					}
					evs, _ := eventlog.Read(h.listDir("l"))
					for _, e := range evs {
						t.Logf("%s %s %s %v", e.Task, e.Type, e.Step, e.Data)
					}
				}
			}()
			parent := h.waitState("l", "1", tt.want, 30*time.Second)
			evs := h.waitEvents("l", eventlog.JoinCompleted, "1", 1)
			if got := countEvents(evs, eventlog.ForkStarted, "1"); got != 1 {
				t.Errorf("%d ForkStarted events", got)
			}
			if _, ok := parent.Metadata.Get("forkState"); ok {
				t.Errorf("forkState not cleared")
			}
			// Three children, each archived, b having walked two steps.
			ids, _ := mustDir(t, h.listDir("l")).List()
			kids := 0
			for _, id := range ids {
				c := h.read("l", id)
				if p, _ := c.Metadata.String("parentTaskId"); p != "1" {
					continue
				}
				kids++
				archived, _ := c.Metadata.Object("taskd").Bool("archived")
				branch, _ := c.Metadata.String("branchName")
				// A branch that failed says so: failed, not completed.
				wantStatus, wantState := taskfile.StatusCompleted, task.Succeeded
				if branch == "c" && tt.c == "false" {
					wantStatus, wantState = taskfile.StatusPending, task.Failed
				}
				if !archived || c.Status != wantStatus || stateOf(c) != wantState {
					t.Errorf("child %s (branch %s): archived %v, status %q, state %q; want archived, %q, %q", id, branch, archived, c.Status, stateOf(c), wantStatus, wantState)
				}
				if branch == "b" && steps(c) != "b1:passed:advance b2:passed:join" {
					t.Errorf("branch b steps = %q", steps(c))
				}
				wantResult := "passed"
				if branch == "c" && tt.c == "false" {
					wantResult = "failed"
				}
				if r, _ := c.Metadata.Object("taskd").String("branchResult"); r != wantResult {
					t.Errorf("branch %s result %q, want %q", branch, r, wantResult)
				}
				// Flow's subject for a branch; a multi-step branch's own
				// advances rewrite it, as flow's write-through does.
				wantSubject := "#1/" + branch + " Fan out\n→ fan · "
				if branch == "b" {
					wantSubject = "#" + id + " Fan out\n→ fan · b2 (direct)"
				}
				if !strings.HasPrefix(c.Subject, wantSubject) {
					t.Errorf("child subject %q, want prefix %q", c.Subject, wantSubject)
				}
			}
			if kids != 3 {
				t.Errorf("%d children, want 3", kids)
			}
			if tt.want == task.Succeeded && !strings.Contains(steps(parent), "after:passed") {
				t.Errorf("parent did not advance past the join: %s", steps(parent))
			}
		})
	}
}

func mustDir(t *testing.T, path string) *taskfile.Dir {
	d, err := taskfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestFlow_TrappedWorkflowRejected drops tasks naming per-list workflows
// that flow would walk but that can catch a task: each is rejected when
// accepted, the file untouched, the trap named in rejected/ and in the
// TaskRejected event.
func TestFlow_TrappedWorkflowRejected(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	const done = `"done": {"type": "end", "result": "success"}`
	traps := []struct {
		id, nodes, edges, want string
	}{
		{"no-end", `"a": {"type": "task", "command": "true"}, "b": {"type": "task", "command": "true"}`,
			`{"from": "a", "to": "b"}, {"from": "b", "to": "a"}`,
			`the workflow has no end node, so no task can finish`},
		{"cycle", `"a": {"type": "task", "command": "true"}, "b": {"type": "task", "command": "true"}, "c": {"type": "task", "command": "true"}, ` + done,
			`{"from": "a", "to": "done", "on": "passed"}, {"from": "a", "to": "b", "on": "failed"}, {"from": "b", "to": "c"}, {"from": "c", "to": "b"}`,
			`nodes "b" → "c" → "b" form a cycle with no way out`},
		{"self-loop", `"a": {"type": "task", "command": "true"}, ` + done,
			`{"from": "a", "to": "a"}, {"from": "a", "to": "done", "on": "passed"}`,
			`node "a": the edge from "a" to itself has no "on"`},
		{"gate", `"a": {"type": "gate", "command": "true"}, ` + done,
			`{"from": "a", "to": "done"}`,
			`node "a": the gate cannot fail`},
	}
	dir := h.listDir("l")
	before := map[string]string{}
	// Every workflow is in place before a task makes the daemon load them.
	for _, tr := range traps {
		h.addWorkflow("l", tr.id, `{"nodes": {"start": {"type": "start"}, `+tr.nodes+`},
		  "edges": [{"from": "start", "to": "a"}, `+tr.edges+`]}`)
	}
	for i, tr := range traps {
		id := itoa(i + 1)
		before[id] = flowTask(id, tr.id, "Walk "+tr.id, "")
		h.drop("l", id, before[id])
	}
	for i, tr := range traps {
		id := itoa(i + 1)
		path := filepath.Join(dir, ".taskd", "rejected", id+".json.txt")
		h.waitFor("rejection of "+id, 10*time.Second, func() bool { _, err := os.Stat(path); return err == nil })
		text, _ := os.ReadFile(path)
		file := filepath.Join(dir, ".taskd", "workflows", tr.id+".json")
		if want := `invalid workflow "` + tr.id + `": its definition has errors: ` + file + ": "; !strings.Contains(string(text), want) ||
			!strings.Contains(string(text), tr.want) || !strings.Contains(string(text), "How to fix it: Correct the workflow file") {
			t.Errorf("%s: rejection says\n%s\nwant %q, %q and the fix", tr.id, text, want, tr.want)
		}
		evs := h.waitEvents("l", eventlog.TaskRejected, id, 1)
		for _, e := range evs {
			if msg, _ := e.Data["error"].(string); e.Type == eventlog.TaskRejected && e.Task == id && !strings.Contains(msg, tr.want) {
				t.Errorf("%s: TaskRejected says %q, want %q", tr.id, msg, tr.want)
			}
		}
		if data, _ := os.ReadFile(filepath.Join(dir, id+".json")); string(data) != before[id] {
			t.Errorf("%s: the task file was changed:\n%s", tr.id, data)
		}
	}
}

func TestFlow_UnknownWorkflowRejected(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	h.drop("l", "1", flowTask("1", "no-such-workflow", "x", ""))
	path := filepath.Join(h.listDir("l"), ".taskd", "rejected", "1.json.txt")
	h.waitFor("rejection", 10*time.Second, func() bool { _, err := os.Stat(path); return err == nil })
	text, _ := os.ReadFile(path)
	if !strings.Contains(string(text), `unknown workflow "no-such-workflow" (known: `) || !strings.Contains(string(text), "quick-task") {
		t.Errorf("rejection: %s", text)
	}
}
