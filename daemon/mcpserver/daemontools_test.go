package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/taskd/taskd/taskfile"
)

// TestSubmit: submit writes the task taskd submit would write, in the
// client's directory (its root, or a directory inside it), into the
// default list or the one named; what the command line refuses, and what
// this server refuses besides, is a tool error and writes nothing.
func TestSubmit(t *testing.T) {
	e := newEnv(t, envOpts{opts: Options{DefaultList: "mine"}})
	os.MkdirAll(filepath.Join(e.project, "sub"), 0o755)
	got := e.callJSON("submit", map[string]any{"prompt": "/read a.go\nFix the flaky test\nplease", "agent": "claude", "model": "m",
		"permissionMode": "acceptEdits", "tools": []string{"Read", "Edit"}, "disallowedTools": []string{"WebFetch"}, "worktree": true,
		"maxTurns": 7, "maxCostUsd": 1.5, "timeout": "10m", "retries": 2, "cwd": "sub"})
	if got["task"] != "mine/1" || got["cwd"] != filepath.Join(e.project, "sub") || !strings.HasPrefix(got["daemon"].(string), "not running") {
		t.Errorf("submit = %v", got)
	}
	tf := readTask(t, filepath.Join(e.root, "mine", "1.json"))
	m := tf.Metadata.Object("taskd")
	want := `{"prompt":"/read a.go\nFix the flaky test\nplease","agent":"claude","model":"m","cwd":"` + filepath.Join(e.project, "sub") +
		`","timeout":"10m","permissionMode":"acceptEdits","tools":["Read","Edit"],"disallowedTools":["WebFetch"],"worktree":true,"maxTurns":7,"maxCostUsd":1.5,"retries":2}`
	var compact bytes.Buffer
	json.Compact(&compact, taskfile.AppendJSON(nil, m))
	if g := compact.String(); g != want {
		t.Errorf("metadata.taskd\n got %s\nwant %s", g, want)
	}
	if tf.Subject != "Fix the flaky test" || tf.Owner != "" || tf.Status != "pending" {
		t.Errorf("subject %q owner %q status %q", tf.Subject, tf.Owner, tf.Status)
	}

	got = e.callJSON("submit", map[string]any{"prompt": "Add a --verbose flag", "workflow": "quick-task", "autonomy": true, "list": "other"})
	wf := readTask(t, filepath.Join(e.root, "other", "1.json"))
	if got["task"] != "other/1" || wf.Description != "Add a --verbose flag" || got["cwd"] != e.project {
		t.Errorf("workflow submit = %v, description %q", got, wf.Description)
	}
	if v, _ := wf.Metadata.String("workflowType"); v != "quick-task" {
		t.Errorf("workflowType %q", v)
	}

	outside := t.TempDir()
	for _, tt := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"no prompt", map[string]any{"agent": "exec"}, "give a prompt, or a workflow"},
		{"autonomy alone", map[string]any{"prompt": "x", "autonomy": true}, "autonomy applies to a workflow"},
		{"negative bound", map[string]any{"prompt": "x", "maxTurns": -1}, "bounds ≥ 0"},
		{"bypass", map[string]any{"prompt": "x", "permissionMode": "bypassPermissions"}, "--allow-bypass"},
		{"cwd outside", map[string]any{"prompt": "x", "cwd": outside}, "outside the directories this session works in"},
		{"cwd through ..", map[string]any{"prompt": "x", "cwd": "../.."}, "outside the directories this session works in"},
		{"cwd a file", map[string]any{"prompt": "x", "cwd": "f"}, "not a directory"},
		{"bad list", map[string]any{"prompt": "x", "list": "../x"}, "a list name is 1-128"},
		{"bad field", map[string]any{"prompt": "x", "timeout": "soon"}, "timeout"},
		{"wrong type", map[string]any{"prompt": 5}, "prompt"},
		{"huge", map[string]any{"prompt": strings.Repeat("x", taskfile.MaxSize+1)}, "a task file holds at most"},
	} {
		write(t, filepath.Join(e.project, "f"), "")
		text, isErr := e.call("submit", tt.args)
		if !isErr || !strings.Contains(text, tt.want) {
			t.Errorf("%s: error %v %q, want %q", tt.name, isErr, text, tt.want)
		}
	}
	if ids, _ := filepath.Glob(filepath.Join(e.root, "*", "*.json")); len(ids) != 2 {
		t.Errorf("refused submits wrote files: %v", ids)
	}
}

// TestSubmit_Bypass: a server started to allow it lets submit ask for
// bypassPermissions.
func TestSubmit_Bypass(t *testing.T) {
	e := newEnv(t, envOpts{opts: Options{AllowBypass: true}})
	e.callJSON("submit", map[string]any{"prompt": "x", "permissionMode": "bypassPermissions"})
	if m, _ := readTask(t, filepath.Join(e.root, "default", "1.json")).Metadata.Object("taskd").String("permissionMode"); m != "bypassPermissions" {
		t.Errorf("permissionMode %q", m)
	}
}

// TestSteer: resolve, cancel and retry change the task file as taskd
// resolve, cancel and retry do, and refuse what they refuse.
func TestSteer(t *testing.T) {
	e := newEnv(t, envOpts{})
	list := filepath.Join(e.root, "w")
	write(t, filepath.Join(list, "1.json"), `{"id": "1", "subject": "x", "owner": "taskd", "status": "pending", "blocks": [], "blockedBy": [],
 "metadata": {"taskd": {"state": "needs_human", "hitl": {"reason": "the review failed twice", "options": ["passed", "failed", "leave"]}}}}`)
	write(t, filepath.Join(list, "2.json"), `{"id": "2", "subject": "x", "owner": "taskd", "status": "in_progress", "blocks": [], "blockedBy": [], "metadata": {"taskd": {"state": "running", "attempt": 1}}}`)
	write(t, filepath.Join(list, "3.json"), `{"id": "3", "subject": "x", "owner": "taskd", "status": "pending", "blocks": [], "blockedBy": [], "metadata": {"taskd": {"state": "failed", "error": "boom", "failures": 3}}}`)

	if text, isErr := e.call("resolve", map[string]any{"task": "w/1", "answer": "maybe"}); !isErr || !strings.Contains(text, "answer one of: passed, failed, leave") {
		t.Errorf("a wrong answer: %s", text)
	}
	e.callJSON("resolve", map[string]any{"task": "w/1", "answer": "passed", "note": "Use the helper."})
	m := readTask(t, filepath.Join(list, "1.json")).Metadata.Object("taskd")
	if a, _ := m.String("resolve"); a != "passed" {
		t.Errorf("resolve = %q", a)
	}
	if n, _ := m.String("resolveNote"); n != "Use the helper." {
		t.Errorf("resolveNote = %q", n)
	}
	if got := e.callJSON("cancel", map[string]any{"task": "2"}); got["task"] != "w/2" {
		t.Errorf("cancel = %v", got)
	}
	if c, _ := readTask(t, filepath.Join(list, "2.json")).Metadata.Object("taskd").Bool("cancel"); !c {
		t.Error("cancel not recorded")
	}
	if text, isErr := e.call("cancel", map[string]any{"task": "w/3"}); !isErr || !strings.Contains(text, "has already ended") {
		t.Errorf("cancel of an ended task: %s", text)
	}
	if text, isErr := e.call("retry", map[string]any{"task": "w/2"}); !isErr || !strings.Contains(text, "cancel it first") {
		t.Errorf("retry of a running task: %s", text)
	}
	e.callJSON("retry", map[string]any{"task": "w/3"})
	m = readTask(t, filepath.Join(list, "3.json")).Metadata.Object("taskd")
	if _, failed := m.Get("failures"); failed || m.Has("state") && func() bool { s, _ := m.String("state"); return s == "failed" }() {
		t.Errorf("retry left %s", taskfile.AppendJSON(nil, m))
	}
}

// TestWait: wait returns at once for a task that has ended (with its
// summary), returns when a task ends while it waits, reporting progress
// meanwhile, returns for a task that needs a person with the answers it
// takes, and says "still" when its time is up.
func TestWait(t *testing.T) {
	var mu sync.Mutex
	var notes []string
	progressed := make(chan struct{}, 100)
	e := newEnv(t, envOpts{progress: func(r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		notes = append(notes, r.Params.Message)
		mu.Unlock()
		progressed <- struct{}{}
	}})
	list := filepath.Join(e.root, "w")
	running := `{"id": "%s", "subject": "x", "owner": "taskd", "status": "in_progress", "blocks": [], "blockedBy": [], "metadata": {"taskd": {"state": "running", "attempt": 1, "progress": {"attempt": 1, "turns": 3, "lastTool": "Edit a.go", "costUsd": 0.04}}}}`
	write(t, filepath.Join(list, "1.json"), `{"id": "1", "subject": "x", "owner": "taskd", "status": "completed", "blocks": [], "blockedBy": [], "metadata": {"taskd": {"state": "succeeded", "attempt": 1, "result": {"success": true, "summary": "all green", "exitCode": 0}}}}`)
	write(t, filepath.Join(list, "2.json"), fmt.Sprintf(running, "2"))
	write(t, filepath.Join(list, "3.json"), `{"id": "3", "subject": "x", "owner": "taskd", "status": "pending", "blocks": [], "blockedBy": [], "metadata": {"taskd": {"state": "needs_human", "hitl": {"reason": "the review failed", "options": ["passed", "leave"]}}}}`)
	write(t, filepath.Join(list, "4.json"), fmt.Sprintf(running, "4"))

	got := e.callJSON("wait", map[string]any{"task": "w/1"})
	if got["ended"] != true || got["ok"] != true || got["state"] != "succeeded" || got["summary"] != "all green" {
		t.Errorf("wait on an ended task = %v", got)
	}
	got = e.callJSON("wait", map[string]any{"task": "w/3"})
	if got["ended"] != false || !equalJSON(got["options"], []any{"passed", "leave"}) || !strings.Contains(got["note"].(string), "the review failed") {
		t.Errorf("wait on a task that needs a person = %v", got)
	}
	write(t, filepath.Join(list, "5.json"), `{"id": "5", "subject": "Claude Code's own", "status": "pending", "blocks": [], "blockedBy": []}`)
	for id, want := range map[string]string{"5": "not_taskd", "6": "missing"} {
		got = e.callJSON("wait", map[string]any{"task": "w/" + id, "timeout": 60})
		if got["ended"] != true || got["ok"] != false || got["state"] != want {
			t.Errorf("wait on w/%s = %v, want it ended at once, %s", id, got, want)
		}
	}
	got = e.callJSON("wait", map[string]any{"task": "w/4", "timeout": 0.5})
	if got["ended"] != false || !strings.HasPrefix(got["note"].(string), "still running after") {
		t.Errorf("wait that times out = %v", got)
	}

	done := make(chan map[string]any, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{"task": "w/2", "timeout": 120}}
		params.SetProgressToken("wait-2")
		res, err := e.cs.CallTool(context.Background(), params)
		var m map[string]any
		if err == nil {
			json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &m)
		}
		done <- m
	}()
	select {
	case <-progressed:
	case <-time.After(30 * time.Second):
		t.Fatal("no progress while waiting")
	}
	write(t, filepath.Join(list, "2.json"), `{"id": "2", "subject": "x", "owner": "taskd", "status": "pending", "blocks": [], "blockedBy": [], "metadata": {"taskd": {"state": "failed", "attempt": 1, "error": "tests fail\nmore"}}}`)
	select {
	case got = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("wait did not return when the task ended")
	}
	if got["ended"] != true || got["ok"] != false || got["note"] != "failed: tests fail" {
		t.Errorf("wait on a task that fails = %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notes) == 0 || !strings.Contains(strings.Join(notes, "\n"), "w/2 running · turn 3 · $0.04 · Edit a.go") {
		t.Errorf("progress notes %q", notes)
	}
}

// TestLogsAndShow: logs returns the end of an attempt's output (the
// transcript of a streaming agent, stdout of others, stderr when asked);
// show returns what taskd show shows: the task, its summary, what its
// attempt spent and the end of its transcript.
func TestLogsAndShow(t *testing.T) {
	e := newEnv(t, envOpts{})
	list := filepath.Join(e.root, "w")
	write(t, filepath.Join(list, "1.json"), `{"id": "1", "subject": "Fix it", "owner": "taskd", "status": "completed", "blocks": [], "blockedBy": [],
 "metadata": {"taskd": {"state": "succeeded", "attempt": 2, "runDir": ".taskd/runs/1/2", "cwd": "/src", "result": {"success": true, "summary": "fixed the redirect", "costUsd": 0.12}}}}`)
	write(t, filepath.Join(list, "2.json"), `{"id": "2", "subject": "later", "owner": "taskd", "status": "pending", "blocks": [], "blockedBy": []}`)
	run1, run2 := filepath.Join(list, ".taskd", "runs", "1", "1"), filepath.Join(list, ".taskd", "runs", "1", "2")
	write(t, filepath.Join(run1, "stdout.log"), "first attempt\n")
	var lines strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	write(t, filepath.Join(run2, "cmd.json"), `{"output": "claude-stream"}`)
	write(t, filepath.Join(run2, "transcript.log"), lines.String())
	write(t, filepath.Join(run2, "stderr.log"), "warning: x\n")
	write(t, filepath.Join(list, "3.json"), `{"id": "3", "subject": "never started", "owner": "taskd", "status": "pending", "blocks": [], "blockedBy": [], "metadata": {"taskd": {"state": "failed", "attempt": 1}}}`)
	write(t, filepath.Join(list, ".taskd", "runs", "3", "1", "stdout.log"), "")
	write(t, filepath.Join(list, ".taskd", "runs", "3", "1", "stderr.log"), "claude: command not found\n")
	write(t, filepath.Join(run2, "result.json"), `{"success": true, "summary": "fixed the redirect", "exitCode": 0, "costUsd": 0.12, "durationMs": 4000, "turns": 6}`)

	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"task": "w/1", "lines": 3}, "w/1 attempt 2, transcript.log:\nline 298\nline 299\nline 300\n"},
		{map[string]any{"task": "w/1", "stderr": true}, "w/1 attempt 2, stderr.log:\nwarning: x\n"},
		{map[string]any{"task": "w/1", "attempt": 1}, "w/1 attempt 1, stdout.log:\nfirst attempt\n"},
		{map[string]any{"task": "w/1", "attempt": 1, "lines": 5000}, "w/1 attempt 1, stdout.log:\nfirst attempt\n"},
		{map[string]any{"task": "w/3"}, "w/3 attempt 1, stdout.log is empty; stderr.log:\nclaude: command not found\n"},
	} {
		if text, isErr := e.call("logs", tt.args); isErr || text != tt.want {
			t.Errorf("logs %v = %q, want %q", tt.args, text, tt.want)
		}
	}
	if text, isErr := e.call("logs", map[string]any{"task": "w/1", "attempt": 7}); !isErr || !strings.Contains(text, "has no attempt 7") {
		t.Errorf("logs of an attempt that never was: %s", text)
	}
	if text, isErr := e.call("logs", map[string]any{"task": "w/2"}); !isErr || !strings.Contains(text, "has not run yet") {
		t.Errorf("logs of a task that has not run: %s", text)
	}
	got := e.callJSON("show", map[string]any{"task": "w/1"})
	last, _ := got["last"].(map[string]any)
	out, _ := got["output"].(map[string]any)
	tail, _ := out["lines"].([]any)
	if got["outcome"] != "succeeded" || got["cwd"] != "/src" || got["summary"] != "fixed the redirect" || last["costUsd"] != 0.12 || last["turns"] != 6.0 ||
		len(tail) != showLines || tail[len(tail)-1] != "line 300" {
		t.Errorf("show = %v", got)
	}
	st := e.callJSON("status", map[string]any{"list": "w"})
	if lists := st["lists"].([]any); len(lists) != 1 || len(lists[0].(map[string]any)["tasks"].([]any)) != 3 {
		t.Errorf("status = %v", st)
	}
	st = e.callJSON("status", map[string]any{"task": "w/2"})
	if tasks := st["lists"].([]any)[0].(map[string]any)["tasks"].([]any); len(tasks) != 1 {
		t.Errorf("status of one task = %v", tasks)
	}
}

func readTask(t *testing.T, path string) *taskfile.Task {
	t.Helper()
	tf, err := taskfile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return tf
}
