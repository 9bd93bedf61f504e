package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The commands a person steers a workflow with edit the file as described:
// resolve takes --note after its arguments, refuses an answer the task does
// not offer, and takes continue at a stage boundary; restart clears where
// the workflow had got to and keeps its trace; submit --autonomy sets
// metadata.autonomy.
func TestSteerCommands(t *testing.T) {
	root := t.TempDir()
	file := func(id string) string { return filepath.Join(root, "l", id+".json") }
	read := func(id string) map[string]any {
		data, err := os.ReadFile(file(id))
		if err != nil {
			t.Fatal(err)
		}
		return readJSON(t, string(data))
	}
	writeTask(t, file("1"), `{"id": "1", "subject": "s", "status": "pending", "owner": "taskd", "metadata": {
  "workflowType": "quick-task", "currentStep": "hitl_blocked", "retryCount": 1,
  "taskd": {"state": "needs_human", "iteration": 4, "guardAt": 50, "hitl": {"kind": "workflow", "options": ["passed", "leave"]},
    "stepTrace": [{"step": "work", "result": "passed", "action": "advance", "attempt": 1}]}}}`)
	writeTask(t, file("2"), `{"id": "2", "subject": "s", "status": "completed", "owner": "taskd", "metadata": {
  "workflowType": "staged", "currentStep": "planned",
  "taskd": {"state": "succeeded", "boundary": {"step": "planned", "next": "build", "options": ["continue"]}}}}`)
	writeTask(t, file("3"), `{"id": "3", "subject": "s", "status": "completed", "owner": "taskd", "metadata": {"taskd": {"state": "succeeded"}}}`)

	if _, errOut, code := runCLI(t, "resolve", "--root", root, "l/1", "failed"); code != 1 || !strings.Contains(errOut, "answer one of: passed, leave") {
		t.Errorf("resolve failed: exit %d, %s", code, errOut)
	}
	if out, errOut, code := runCLI(t, "resolve", "--root", root, "l/1", "passed", "--note", "use the helper"); code != 0 || out != "l/1 answered passed\n" {
		t.Fatalf("resolve --note: exit %d, %s%s", code, out, errOut)
	}
	if m := read("1"); field(m, "metadata", "taskd", "resolve") != "passed" || field(m, "metadata", "taskd", "resolveNote") != "use the helper" {
		t.Errorf("resolve wrote %v", field(m, "metadata", "taskd"))
	}
	if _, errOut, code := runCLI(t, "resolve", "--root", root, "l/2", "passed"); code != 1 || !strings.Contains(errOut, "answer one of: continue") {
		t.Errorf("resolve passed at a boundary: exit %d, %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, "resolve", "--root", root, "l/2", "continue"); code != 0 {
		t.Errorf("resolve continue: exit %d, %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, "resolve", "--root", root, "l/3", "continue"); code != 1 || !strings.Contains(errOut, "not at a stage boundary") {
		t.Errorf("resolve continue of a finished task: exit %d, %s", code, errOut)
	}

	if out, errOut, code := runCLI(t, "restart", "--root", root, "l/1"); code != 0 || out != "l/1 will run from its first step\n" {
		t.Fatalf("restart: exit %d, %s%s", code, out, errOut)
	}
	m := read("1")
	td := field(m, "metadata", "taskd").(map[string]any)
	if field(m, "metadata", "currentStep") != "" || field(m, "metadata", "retryCount") != 0.0 || m["status"] != "pending" {
		t.Errorf("restart left the workflow at %v (retry count %v, status %v)", field(m, "metadata", "currentStep"), field(m, "metadata", "retryCount"), m["status"])
	}
	for _, k := range []string{"state", "hitl", "resolve", "resolveNote", "iteration", "guardAt"} {
		if _, ok := td[k]; ok {
			t.Errorf("restart kept metadata.taskd.%s", k)
		}
	}
	if trace := td["stepTrace"].([]any); len(trace) != 2 || field(trace[1].(map[string]any), "action") != "restart" {
		t.Errorf("step trace after restart: %v", trace)
	}

	out, errOut, code := runCLI(t, "submit", "--root", root, "--list", "l", "--workflow", "quick-task", "--autonomy", "Do it all")
	if code != 0 {
		t.Fatalf("submit --autonomy: exit %d, %s", code, errOut)
	}
	data, _ := os.ReadFile(strings.TrimSpace(out))
	if m := readJSON(t, string(data)); field(m, "metadata", "autonomy") != true || field(m, "metadata", "workflowType") != "quick-task" {
		t.Errorf("submit --autonomy wrote %s", data)
	}
	if _, errOut, code := runCLI(t, "submit", "--root", root, "--autonomy", "echo hi"); code != 2 || !strings.Contains(errOut, "--autonomy applies to a workflow") {
		t.Errorf("submit --autonomy without a workflow: exit %d, %s", code, errOut)
	}
}
