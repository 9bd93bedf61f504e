package daemon_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
	"github.com/taskd/taskd/taskfile"
)

// TestFlow_RealClaudeCode runs a workflow whose steps use the claude profile
// through the real Claude Code CLI, against a stub Messages API that passes
// the build and fix steps and fails the review: the workflow takes the
// failed edge to fix, then ends. The daemon's argv, the parsed results and
// the path are checked.
func TestFlow_RealClaudeCode(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	stub := claudestub.New(t, textAnswer(func(body string) string {
		if strings.Contains(body, "## Step: Review") {
			return `The change has no tests. {"success": false, "summary": "needs tests"}`
		}
		return `Done. {"success": true, "summary": "step done"}`
	}))
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"claude": {
			Command: []string{bin, "-p", "--output-format", "json"}, Prompt: "stdin", Output: "claude-json",
			Env: stub.Env(t), Timeout: "2m",
		}}
	})
	h.addWorkflow("l", "review-loop", `{"id": "review-loop", "name": "review loop", "nodes": {
  "start": {"type": "start"},
  "build": {"type": "task", "name": "Build", "agent": "Developer"},
  "review": {"type": "gate", "name": "Review", "agent": "Reviewer"},
  "fix": {"type": "task", "name": "Fix", "agent": "Developer"},
  "end": {"type": "end", "result": "success"}},
 "edges": [{"from": "start", "to": "build"}, {"from": "build", "to": "review"},
  {"from": "review", "to": "end", "on": "passed"}, {"from": "review", "to": "fix", "on": "failed"},
  {"from": "fix", "to": "end"}]}`)
	h.drop("l", "1", flowTask("1", "review-loop", "Add a greeting", `{"model": "claude-test-model"}`))

	tf := h.waitState("l", "1", task.Succeeded, 3*time.Minute)
	if got, want := steps(tf), "build:passed:advance review:failed:advance fix:passed:advance"; got != want {
		t.Errorf("path\n got %s\nwant %s", got, want)
	}
	run := func(n int, name string) []byte {
		data, err := os.ReadFile(filepath.Join(h.listDir("l"), ".taskd", "runs", "1", fmt.Sprint(n), name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	var cmd struct {
		Argv      []string `json:"argv"`
		Prompt    string   `json:"prompt"`
		SessionID string   `json:"sessionId"`
	}
	json.Unmarshal(run(1, "cmd.json"), &cmd)
	// A new session's id is given up front, and recorded (agent.Session).
	if got, want := strings.Join(cmd.Argv, " "), bin+" -p --output-format json --model claude-test-model --session-id "+cmd.SessionID; got != want || cmd.Prompt != "stdin" || cmd.SessionID == "" {
		t.Errorf("argv %q (prompt via %s), want %q via stdin", got, cmd.Prompt, want)
	}
	var review agent.Result
	json.Unmarshal(run(2, "result.json"), &review)
	if review.Success || review.Summary != "needs tests" || review.SessionID == "" || review.ExitCode != 0 {
		t.Errorf("review result = %+v", review)
	}
	if !strings.Contains(string(run(2, "prompt.md")), "## Step: Review") {
		t.Errorf("review prompt:\n%s", run(2, "prompt.md"))
	}
	bodies := stub.Bodies()
	if len(bodies) != 3 {
		t.Fatalf("the stub was asked %d times, want 3", len(bodies))
	}
	for _, b := range bodies {
		if !strings.Contains(b, `"model":"claude-test-model"`) || !strings.Contains(b, "Add a greeting") {
			t.Errorf("request lacks the model or the task: %.200s", b)
		}
	}
}

// TestChildren_RealClaudePushes: the real Claude Code CLI, told by the stub
// to run a Bash command, runs taskd push and taskd run itself; the child
// appears and runs, and the parent is resumed in its session with the
// child's result.
func TestChildren_RealClaudePushes(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	stub := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		switch {
		case strings.Contains(body, "Results of your child tasks"):
			return claudestub.Turn{Text: `Read the results. {"success": true, "summary": "resumed with the child's result"}`}
		case strings.Contains(body, "tool_result"):
			return claudestub.Turn{Text: `Started the child. {"success": true, "summary": "pushed"}`}
		}
		return claudestub.Turn{Bash: `taskd push name=x agent=exec 'sleep 2; echo child done; echo "{\"success\": true, \"summary\": \"x finished\"}"' && taskd run`}
	})
	h := startDaemonWithCLI(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"claude": {
			Command: []string{bin, "-p", "--output-format", "json"}, Prompt: "stdin", Output: "claude-json",
			Env: stub.Env(t), Timeout: "2m",
		}}
	})
	h.drop("l", "1", `{"subject": "delegate", "owner": "taskd", "metadata": {"taskd": {"agent": "claude", "tools": ["Bash(taskd:*)"], "prompt": "Start a child task named x that says child done."}}}`)
	parent := h.waitState("l", "1", task.Succeeded, 3*time.Minute)
	var child *taskfile.Task
	for _, id := range mustList(t, h.listDir("l")) {
		if tf := h.read("l", id); id != "1" {
			child = tf
		}
	}
	if child == nil {
		t.Fatalf("no child was created\n%s", h.logs)
	}
	m := child.Metadata.Object("taskd")
	if n, _ := m.String("name"); n != "x" || stateOf(child) != task.Succeeded {
		t.Errorf("child name %q state %q", n, stateOf(child))
	}
	if p, _ := m.String("parent"); p != "1" {
		t.Errorf("child parent %q", p)
	}
	if s, _ := parent.Metadata.Object("taskd").Object("result").String("summary"); s != "resumed with the child's result" {
		t.Errorf("parent summary %q (was it resumed?)", s)
	}
	evs := h.waitEvents("l", eventlog.TaskResumed, "1", 1)
	if countEvents(evs, eventlog.TaskResumed, "1") != 1 {
		t.Errorf("parent resumed %d times", countEvents(evs, eventlog.TaskResumed, "1"))
	}
	var cmd struct{ Argv []string }
	raw, _ := os.ReadFile(filepath.Join(h.listDir("l"), ".taskd", "runs", "1", "2", "cmd.json"))
	json.Unmarshal(raw, &cmd)
	if !slicesContainsPair(cmd.Argv, "--resume") {
		t.Errorf("the resumed attempt did not resume the session: %v", cmd.Argv)
	}
	// The first attempt called one tool (Bash); the resumed one none, though
	// its session transcript holds the first attempt's call too.
	for n, want := range map[string]int{"1": 1, "2": 0} {
		var res struct{ ToolInvocations *int }
		raw, _ := os.ReadFile(filepath.Join(h.listDir("l"), ".taskd", "runs", "1", n, "result.json"))
		if err := json.Unmarshal(raw, &res); err != nil || res.ToolInvocations == nil {
			t.Errorf("attempt %s: no toolInvocations in result.json (%v): %s", n, err, raw)
		} else if got := *res.ToolInvocations; got != want {
			t.Errorf("attempt %s: toolInvocations = %d, want %d", n, got, want)
		}
	}
}

// TestChildren_RealClaudeChildEndsFirst: the real Claude Code CLI pushes
// a child, starts it and waits for it to end (taskd wait) before its turn
// ends, as an orchestrator that checks on its research does: the child
// ends first. The parent is resumed in its session with the child's
// result all the same.
func TestChildren_RealClaudeChildEndsFirst(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	stub := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		switch {
		case strings.Contains(body, "Results of your child tasks"):
			return claudestub.Turn{Text: `Read the results. {"success": true, "summary": "resumed with the child's result"}`}
		case strings.Contains(body, "tool_result"):
			return claudestub.Turn{Text: `The research is done. {"success": true, "summary": "researched"}`}
		}
		// The list is new: the parent is task 1, its child task 2.
		return claudestub.Turn{Bash: `taskd push name=research agent=exec 'echo "{"success": true, "summary": "found 3 sources"}"' && taskd run && taskd wait l/2`}
	})
	h := startDaemonWithCLI(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"claude": {
			Command: []string{bin, "-p", "--output-format", "json"}, Prompt: "stdin", Output: "claude-json",
			Env: stub.Env(t), Timeout: "2m",
		}}
	})
	h.drop("l", "1", `{"subject": "orchestrate", "owner": "taskd", "metadata": {"taskd": {"agent": "claude", "tools": ["Bash(taskd:*)"], "prompt": "Research the topic with a child task and wait for it."}}}`)
	parent := h.waitState("l", "1", task.Succeeded, 3*time.Minute)
	if s, _ := parent.Metadata.Object("taskd").Object("result").String("summary"); s != "resumed with the child's result" {
		t.Errorf("parent summary %q (was it resumed?)\n%s", s, h.logs)
	}
	evs := h.events("l")
	ended, waited := -1, -1
	for i, e := range evs {
		switch {
		case e.Type == eventlog.TaskSucceeded && e.Task == "2" && ended < 0:
			ended = i
		case e.Type == eventlog.TaskWaiting && e.Task == "1" && waited < 0:
			waited = i
		}
	}
	if ended < 0 || waited < 0 || ended > waited {
		t.Errorf("the child did not end before its parent's turn did (events %d and %d)", ended, waited)
	}
	if n := countEvents(evs, eventlog.TaskResumed, "1"); n != 1 {
		t.Errorf("parent resumed %d times, want 1", n)
	}
	if bodies := stub.Bodies(); !strings.Contains(bodies[len(bodies)-1], "found 3 sources") {
		t.Errorf("the resumed session was not given the child's result: %.300s", bodies[len(bodies)-1])
	}
}

func slicesContainsPair(argv []string, flag string) bool {
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == flag && argv[i+1] != "" {
			return true
		}
	}
	return false
}

// TestFlow_RealClaudeQuickTask walks the built-in quick-task workflow with
// the real Claude Code CLI: the first review fails with a reason, the work
// step runs again, and the stub sees the reason in that step's request.
func TestFlow_RealClaudeQuickTask(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	const reason = "REVIEW-314: the greeting lacks its comma"
	var mu sync.Mutex
	reviews := 0
	stub := claudestub.New(t, textAnswer(func(body string) string {
		if !strings.Contains(body, "## Step: Check the work") {
			return `Changed it. {"success": true, "summary": "work done"}`
		}
		mu.Lock()
		defer mu.Unlock()
		if reviews++; reviews == 1 {
			return `Not yet. {"success": false, "summary": "` + reason + `"}`
		}
		return `Good now. {"success": true, "summary": "approved"}`
	}))
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"claude": {
			Command: []string{bin, "-p", "--output-format", "json"}, Prompt: "stdin", Output: "claude-json",
			Env: stub.Env(t), Timeout: "2m",
		}}
	})
	h.drop("l", "1", flowTask("1", "quick-task", "Add a greeting", ""))
	tf := h.waitState("l", "1", task.Succeeded, 3*time.Minute)
	if got, want := steps(tf), "work:passed:advance verify:failed:retry work:passed:advance verify:passed:advance"; got != want {
		t.Errorf("path\n got %s\nwant %s", got, want)
	}
	bodies := stub.Bodies()
	if len(bodies) != 4 {
		t.Fatalf("the stub was asked %d times, want 4", len(bodies))
	}
	if strings.Contains(bodies[0], "REVIEW-314") {
		t.Errorf("the first work request already carries the review's reason")
	}
	for _, want := range []string{reason, "This is attempt 2 of this step.", `The step \"Check the work\" (verify) failed`} {
		if !strings.Contains(bodies[2], want) {
			t.Errorf("the second work request lacks %q: %.2000s", want, bodies[2])
		}
	}
	if !strings.Contains(h.runText("l", "1", 3, "prompt.md"), reason) {
		t.Errorf("prompt.md of the second work step lacks the reason")
	}
}
