package mcpserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ctxWorkflow is a project workflow whose step loads context files and
// refers to a file next to the workflow: its answers show the project
// root and the source root Navigate used.
const ctxWorkflow = `{"id": "ctx", "name": "Context", "nodes": {
  "start": {"type": "start"},
  "work": {"type": "task", "name": "Work", "agent": "Developer", "description": "Follow ./notes/how.md", "context_files": ["docs/a.md", "./b.md"]},
  "check": {"type": "gate", "name": "Check", "agent": "Reviewer", "maxRetries": 1},
  "end": {"type": "end", "result": "success"},
  "hitl": {"type": "end", "result": "blocked", "escalation": "hitl"}},
 "edges": [{"from": "start", "to": "work"}, {"from": "work", "to": "check"},
  {"from": "check", "to": "end", "on": "passed"}, {"from": "check", "to": "work", "on": "failed"},
  {"from": "check", "to": "hitl", "on": "failed"}]}`

// TestNavigate_Errors: Navigate's failures come as flow's error object,
// {"schemaVersion": 2, "error": <flow's message>, "tool": "Navigate",
// "args": <the arguments>}, in the result's text (not as a tool error);
// a step without an edge for the result is flow's returned object.
func TestNavigate_Errors(t *testing.T) {
	e := newEnv(t, envOpts{})
	list := filepath.Join(e.root, "l")
	write(t, filepath.Join(list, "1.json"), `{"id": "1", "subject": "x", "status": "pending", "blocks": [], "blockedBy": []}`)
	write(t, filepath.Join(list, "2.json"), `{"id": "2", "subject": "x", "metadata": {"workflowType": "quick-task", "currentStep": "end_success"}}`)
	missing := filepath.Join(list, "9.json")
	for _, tt := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"no workflow", map[string]any{}, "workflowType is required (either directly or via task metadata)"},
		{"unknown workflow", map[string]any{"workflowType": "nope"}, "Workflow 'nope' not found. Use ListWorkflows to see available workflows."},
		{"unknown step", map[string]any{"workflowType": "quick-task", "stepId": "zz"}, "Step 'zz' not found in workflow 'quick-task'"},
		{"start at an end", map[string]any{"workflowType": "quick-task", "stepId": "end_success"}, "Cannot start at end node 'end_success'. Provide a task, gate, or fork/join step."},
		{"missing task file", map[string]any{"taskFilePath": missing}, "Task file not found: " + missing},
		{"no metadata", map[string]any{"taskFilePath": filepath.Join(list, "1.json")}, "Task has no metadata"},
		{"a number for a string", map[string]any{"workflowType": 7}, "workflowType is a number: a string is expected"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text, isErr := e.call("Navigate", tt.args)
			if isErr {
				t.Fatalf("a tool error, want flow's error object: %s", text)
			}
			var got struct {
				SchemaVersion int            `json:"schemaVersion"`
				Error         string         `json:"error"`
				Tool          string         `json:"tool"`
				Args          map[string]any `json:"args"`
			}
			if err := json.Unmarshal([]byte(text), &got); err != nil {
				t.Fatal(err)
			}
			wantArgs, _ := json.Marshal(tt.args)
			gotArgs, _ := json.Marshal(got.Args)
			if got.SchemaVersion != 2 || got.Error != tt.want || got.Tool != "Navigate" || string(gotArgs) != string(wantArgs) {
				t.Errorf("got %s\nwant error %q with args %s", text, tt.want, wantArgs)
			}
			if !strings.HasPrefix(text, "{\n  \"schemaVersion\": 2,\n  \"error\": ") {
				t.Errorf("not laid out as JSON.stringify(…, null, 2): %s", text)
			}
		})
	}
	t.Run("no edge for the result", func(t *testing.T) {
		got := e.callJSON("Navigate", map[string]any{"taskFilePath": filepath.Join(list, "2.json"), "result": "passed"})
		if got["error"] != "No matching edge from 'end_success' with result 'passed'" || got["currentStep"] != "end_success" || got["evaluation"] == nil || got["schemaVersion"] != nil {
			t.Errorf("got %v", got)
		}
	})
}

// TestNavigate_ProjectWorkflow: a workflow in the project's
// .flow/workflows is navigated without being loaded, its "./" paths and
// context files resolved against the client's root (flow's project root),
// and a walk writes each step into the task file.
func TestNavigate_ProjectWorkflow(t *testing.T) {
	e := newEnv(t, envOpts{})
	write(t, filepath.Join(e.project, ".flow", "workflows", "ctx", "workflow.json"), ctxWorkflow)
	start := e.callJSON("Navigate", map[string]any{"workflowType": "ctx", "description": "Add a flag"})
	instr, _ := start["orchestratorInstructions"].(string)
	for _, want := range []string{"Read file: " + filepath.Join(e.project, "docs/a.md"), "Read file: " + filepath.Join(e.project, "b.md"), "Add a flag"} {
		if !strings.Contains(instr, want) {
			t.Errorf("instructions lack %q:\n%s", want, instr)
		}
	}
	step, _ := start["stepInstructions"].(map[string]any)
	if step["description"] != "Follow "+filepath.Join(e.project, "notes/how.md") || start["sourceRoot"] != e.project {
		t.Errorf("./ not resolved against the project: %v, sourceRoot %v", step["description"], start["sourceRoot"])
	}
	path := filepath.Join(e.root, "work", "4.json")
	write(t, path, `{"id": "4", "subject": "Add a flag", "activeForm": "x", "status": "pending", "blocks": [], "blockedBy": [], "metadata": {"userDescription": "Add a flag", "workflowType": "ctx", "currentStep": "work", "retryCount": 0}}`)
	for _, tt := range []struct{ result, step, action string }{
		{"passed", "check", "advance"},
		{"failed", "work", "retry"},
		{"passed", "check", "advance"},
		{"failed", "hitl", "escalate"},
	} {
		got := e.callJSON("Navigate", map[string]any{"taskFilePath": path, "result": tt.result})
		if got["currentStep"] != tt.step || got["action"] != tt.action {
			t.Errorf("%s: step %v action %v, want %s %s", tt.result, got["currentStep"], got["action"], tt.step, tt.action)
		}
		data, _ := os.ReadFile(path)
		if !strings.Contains(string(data), `"currentStep": "`+tt.step+`"`) {
			t.Errorf("the task file does not record step %s:\n%s", tt.step, data)
		}
	}
	cur := e.callJSON("Navigate", map[string]any{"taskFilePath": path})
	if cur["action"] != "current" || cur["terminal"] != "hitl" {
		t.Errorf("current: %v", cur)
	}
}

// TestNavigate_Roots: the project root is the client's first root, asked
// for once on the newest protocol (an input request the client answers)
// and on flow's (a roots/list request); without roots, the server's
// project directory; without either, none (no context block).
func TestNavigate_Roots(t *testing.T) {
	other := t.TempDir()
	for _, tt := range []struct {
		name    string
		o       envOpts
		project func(e *env) string
	}{
		{"newest protocol", envOpts{roots: []string{other}}, func(*env) string { return other }},
		{"flow's protocol", envOpts{protocol: "2025-06-18", roots: []string{other}}, func(*env) string { return other }},
		{"no roots", envOpts{noRoots: true}, func(e *env) string { return e.project }},
		{"no roots nor project", envOpts{noRoots: true, noProject: true}, func(*env) string { return "" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.o)
			dir := tt.project(e)
			if dir != "" {
				write(t, filepath.Join(dir, ".flow", "workflows", "ctx.json"), ctxWorkflow)
			} else {
				write(t, filepath.Join(e.home, ".config", "taskd", "workflows", "ctx.json"), ctxWorkflow)
			}
			for range 2 {
				got := e.callJSON("Navigate", map[string]any{"workflowType": "ctx"})
				instr, _ := got["orchestratorInstructions"].(string)
				switch {
				case dir == "" && strings.Contains(instr, "## Context"):
					t.Errorf("a context block without a project root:\n%s", instr)
				case dir != "" && !strings.Contains(instr, "Read file: "+filepath.Join(dir, "docs/a.md")):
					t.Errorf("the context block does not use %s:\n%s", dir, instr)
				}
			}
		})
	}
}
