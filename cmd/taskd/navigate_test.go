package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs taskd with args and returns what it printed and its exit
// status, as main would.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut)
	code = exitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

// isolate points the user workflow directory at an empty one.
func isolate(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
}

func writeTask(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, data string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, data)
	}
	return m
}

func field(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		o, _ := v.(map[string]any)
		v = o[p]
	}
	return v
}

// TestNavigate walks a task through quick-task with the CLI and checks
// output, exit status and the file at each step.
func TestNavigate(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	task := filepath.Join(dir, "7.json")
	writeTask(t, task, `{"id": "7", "subject": "Rename foo", "status": "pending", "metadata": {"workflowType": "quick-task", "userDescription": "Rename foo", "currentStep": "work", "retryCount": 0, "priority": 3}}`)

	steps := []struct {
		args     []string
		code     int
		step     any // currentStep in the response
		action   any
		fileStep any // metadata.currentStep in the file afterwards
	}{
		{[]string{}, 0, "work", "current", "work"},
		{[]string{"--result", "passed"}, 0, "verify", "advance", "verify"},
		{[]string{"--result", "failed"}, 0, "work", "retry", "work"},
		{[]string{"--result", "passed"}, 0, "verify", "advance", "verify"},
		{[]string{"--result", "maybe"}, 3, nil, nil, "verify"},
		{[]string{"--result", "failed"}, 0, "hitl_blocked", "escalate", "hitl_blocked"},
		{[]string{"--result", "passed", "--autonomy"}, 0, "work", "advance", "work"},
	}
	for i, s := range steps {
		out, errOut, code := runCLI(t, append([]string{"navigate", "--task", task}, s.args...)...)
		if code != s.code {
			t.Fatalf("step %d %v: exit %d, want %d\n%s%s", i, s.args, code, s.code, out, errOut)
		}
		resp := readJSON(t, out)
		if code == 3 {
			if got, want := resp["error"], "No matching edge from 'verify' with result 'maybe'"; got != want {
				t.Errorf("step %d: error %v, want %q", i, got, want)
			}
		} else if resp["currentStep"] != s.step || resp["action"] != s.action {
			t.Errorf("step %d %v: at %v by %v, want %v by %v", i, s.args, resp["currentStep"], resp["action"], s.step, s.action)
		}
		data, _ := os.ReadFile(task)
		file := readJSON(t, string(data))
		if got := field(file, "metadata", "currentStep"); got != s.fileStep {
			t.Errorf("step %d: file at %v, want %v", i, got, s.fileStep)
		}
		if got := field(file, "metadata", "priority"); got != 3.0 {
			t.Errorf("step %d: metadata.priority = %v, want it kept", i, got)
		}
	}
	data, _ := os.ReadFile(task)
	file := readJSON(t, string(data))
	if got, want := file["subject"], "#7 Rename foo ⚡\n→ quick-task · work (Developer)"; got != want {
		t.Errorf("subject = %q, want %q", got, want)
	}
	if got := field(file, "metadata", "autonomy"); got != true {
		t.Errorf("autonomy = %v, want true", got)
	}
	// Deviation: an explicit --autonomy=false switches it off.
	runCLI(t, "navigate", "--task", task, "--result", "passed", "--autonomy=false")
	data, _ = os.ReadFile(task)
	if got := field(readJSON(t, string(data)), "metadata", "autonomy"); got != false {
		t.Errorf("after --autonomy=false: autonomy = %v, want false", got)
	}
	if !strings.HasSuffix(string(data), "}") || strings.Contains(string(data), "\t") {
		t.Errorf("file not in Claude Code's layout:\n%s", data)
	}
}

// TestNavigate_NoWrite checks that Start and Current mode leave the file's
// bytes alone, even when taskd would lay them out differently.
func TestNavigate_NoWrite(t *testing.T) {
	isolate(t)
	task := filepath.Join(t.TempDir(), "3.json")
	const compact = `{"id":"3","metadata":{"workflowType":"bug-fix","userDescription":"Crash on save"}}`
	writeTask(t, task, compact)
	for _, args := range [][]string{{}, {"--result", "passed"}} {
		out, errOut, code := runCLI(t, append([]string{"navigate", "--task", task}, args...)...)
		if code != 0 || readJSON(t, out)["action"] != "start" {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		if data, _ := os.ReadFile(task); string(data) != compact {
			t.Errorf("%v: Start mode rewrote the file:\n%s", args, data)
		}
	}
	// --record-start records the first step as /flow:run's TaskCreate would.
	out, _, code := runCLI(t, "navigate", "--task", task, "--record-start")
	data, _ := os.ReadFile(task)
	file := readJSON(t, string(data))
	if code != 0 || field(file, "metadata", "currentStep") != "reproduce" || field(file, "metadata", "retryCount") != 0.0 ||
		file["subject"] != "#3 Crash on save 🐛\n→ bug-fix · reproduce (Tester)" || file["description"] != readJSON(t, out)["orchestratorInstructions"] {
		t.Errorf("--record-start wrote:\n%s", data)
	}
}

func TestNavigate_Errors(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	writeTask(t, filepath.Join(dir, "8.json"), `{"id": "9", "metadata": {"workflowType": "bug-fix"}}`)
	writeTask(t, filepath.Join(dir, "10.json"), `{"id": "10", "subject": "no metadata"}`)
	writeTask(t, filepath.Join(dir, "11.json"), `{"id": "11", "metadata": {"workflowType": "mine", "currentStep": "x"}}`)
	writeTask(t, filepath.Join(dir, ".taskd", "workflows", "mine.json"), `{"nodes": {"x": {"type": "task"}}, "edges": []}`)
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"--task", filepath.Join(dir, "missing.json")}, 1, "Task file not found: " + filepath.Join(dir, "missing.json")},
		{[]string{"--task", filepath.Join(dir, "8.json")}, 1, `the id "9" does not match the file name 8.json`},
		{[]string{"--task", filepath.Join(dir, "10.json")}, 1, "Task has no metadata"},
		{[]string{"--task", filepath.Join(dir, "11.json")}, 1, `workflow "mine" (` + filepath.Join(dir, ".taskd", "workflows", "mine.json") + `) has errors`},
		{[]string{"--workflow", "nope"}, 1, "Workflow 'nope' not found. Use ListWorkflows to see available workflows.\nRun 'taskd workflows list'"},
		{[]string{"--workflow", "bug-fix", "--step", "end_success"}, 1, "Cannot start at end node 'end_success'."},
		{[]string{}, 1, "workflowType is required"},
		{[]string{"--task", filepath.Join(dir, "x.txt")}, 1, "a task file is named <id>.json"},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
		{[]string{"--autonomy=maybe"}, 2, "want true or false"},
	}
	for _, tt := range tests {
		out, errOut, code := runCLI(t, append([]string{"navigate"}, tt.args...)...)
		if code != tt.code || !strings.Contains(errOut, tt.stderr) || out != "" {
			t.Errorf("navigate %v: exit %d, stdout %q, stderr:\n%s\nwant exit %d and stderr containing %q", tt.args, code, out, errOut, tt.code, tt.stderr)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "8.json")); string(data) != `{"id": "9", "metadata": {"workflowType": "bug-fix"}}` {
		t.Errorf("a refused file was modified:\n%s", data)
	}
}

// TestNavigate_Paths checks "~/" in --task (a deviation from flow), the
// list's own workflow directory, --workflows, --source-root and
// --project-root.
func TestNavigate_Paths(t *testing.T) {
	isolate(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	list := filepath.Join(home, "tasks", "proj")
	const wf = `{"nodes": {"start": {"type": "start"}, "read": {"type": "task", "name": "%s", "description": "See ./guide.md",
	  "context_files": ["README.md", "./guide.md"]}, "done": {"type": "end", "result": "success"}},
	  "edges": [{"from": "start", "to": "read"}, {"from": "read", "to": "done"}]}`
	writeTask(t, filepath.Join(list, ".taskd", "workflows", "reader.json"), strings.Replace(wf, "%s", "from the list", 1))
	extra := filepath.Join(home, "extra")
	writeTask(t, filepath.Join(extra, "reader.json"), strings.Replace(wf, "%s", "from --workflows", 1))
	writeTask(t, filepath.Join(list, "5.json"), `{"id": "5", "metadata": {"workflowType": "reader", "currentStep": "read"}}`)

	out, errOut, code := runCLI(t, "navigate", "--task", "~/tasks/proj/5.json", "--project-root", "/proj")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	resp := readJSON(t, out)
	listWF := filepath.Join(list, ".taskd", "workflows")
	if got, want := field(resp, "stepInstructions", "name"), "from the list"; got != want {
		t.Errorf("name = %v, want %v", got, want)
	}
	if got, want := resp["sourceRoot"], listWF; got != want {
		t.Errorf("sourceRoot = %v, want %v", got, want)
	}
	if got, want := field(resp, "stepInstructions", "description"), "See "+listWF+"/guide.md"; got != want {
		t.Errorf("description = %v, want %v", got, want)
	}
	if oi, _ := resp["orchestratorInstructions"].(string); !strings.HasSuffix(oi, "- Read file: /proj/README.md\n- Read file: "+listWF+"/guide.md") {
		t.Errorf("orchestratorInstructions = %q", oi)
	}

	out, _, _ = runCLI(t, "navigate", "--task", "~/tasks/proj/5.json", "--workflows", extra, "--source-root=", "--project-root=")
	resp = readJSON(t, out)
	if field(resp, "stepInstructions", "name") != "from --workflows" || resp["sourceRoot"] != nil ||
		field(resp, "stepInstructions", "description") != "See ./guide.md" || strings.Contains(resp["orchestratorInstructions"].(string), "## Context") {
		t.Errorf("with --workflows, --source-root= and --project-root=: %s", out)
	}
}
