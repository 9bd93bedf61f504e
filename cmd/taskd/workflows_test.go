package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/workflows"
)

func TestWorkflows(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	writeTask(t, filepath.Join(dir, "broken.json"), `{"nodes": {"start": {"type": "start"}}, "edges": []}`)
	writeTask(t, filepath.Join(dir, "quick-task.json"), `{"name": "My quick task", "nodes": {"start": {"type": "start"}, "x": {"type": "task", "command": "true"},
	  "done": {"type": "end", "result": "success"}}, "edges": [{"from": "start", "to": "x"}, {"from": "x", "to": "done"}]}`)

	out, errOut, code := runCLI(t, "workflows", "list", "--workflows", dir)
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"ID ", "feature-development  ", "built-in", "parallel-checks", "command-check",
		"broken ", "INVALID (taskd workflows validate)", filepath.Join(dir, "quick-task.json") + "  My quick task",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}

	builtins := len(workflows.Builtin())
	out, _, code = runCLI(t, "workflows", "list", "--json")
	var list []struct {
		ID, File string
		Builtin  bool
		OK       bool
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || code != 0 || len(list) != builtins || !list[0].Builtin || !list[0].OK {
		t.Errorf("list --json: exit %d, %v:\n%s", code, err, out)
	}

	out, _, code = runCLI(t, "workflows", "show", "command-check")
	if code != 0 || !strings.Contains(out, `"command": "make test"`) || !json.Valid([]byte(out)) {
		t.Errorf("show: exit %d:\n%s", code, out)
	}
	out, _, code = runCLI(t, "workflows", "diagram", "quick-task", "--workflows", dir)
	if code != 0 || !strings.HasPrefix(out, "flowchart TD\n") || !strings.Contains(out, "$ true") {
		t.Errorf("diagram: exit %d:\n%s", code, out)
	}

	out, errOut, code = runCLI(t, "workflows", "validate", filepath.Join(dir, "quick-task.json"), filepath.Join(dir, "broken.json"))
	want := filepath.Join(dir, "quick-task.json") + ": ok\n" +
		filepath.Join(dir, "broken.json") + `: node "start": the start node has no outgoing edge` + "\n"
	if code != 1 || out != want || !strings.Contains(errOut, "some workflows have errors") {
		t.Errorf("validate: exit %d, stdout:\n%s\nwant:\n%s\nstderr: %s", code, out, want, errOut)
	}
	out, _, code = runCLI(t, "workflows", "validate")
	if code != 0 || strings.Count(out, ": ok\n") != builtins {
		t.Errorf("validate (all): exit %d:\n%s", code, out)
	}

	for _, args := range [][]string{{}, {"show"}, {"frobnicate"}, {"list", "x"}} {
		if _, _, code := runCLI(t, append([]string{"workflows"}, args...)...); code != 2 {
			t.Errorf("workflows %v: exit %d, want 2", args, code)
		}
	}
	if _, errOut, code := runCLI(t, "workflows", "show", "nope"); code != 1 || !strings.Contains(errOut, `no workflow "nope"`) {
		t.Errorf("show nope: exit %d, %s", code, errOut)
	}
}
