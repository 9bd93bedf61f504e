package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestWorkflows_Traps checks that `taskd workflows validate` refuses each
// trap, naming its nodes, while `taskd navigate`, which answers as flow
// does, still walks the workflow.
func TestWorkflows_Traps(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	tests := []struct {
		id, nodes, edges string
		want             []string // the problems, each after "FILE: "
		refused          bool     // an error besides the traps: navigate refuses the workflow
	}{{
		id:    "no-end",
		nodes: `"start": {"type": "start"}, "a": {"type": "task"}, "b": {"type": "task"}`,
		edges: `{"from": "start", "to": "a"}, {"from": "a", "to": "b"}, {"from": "b", "to": "a"}`,
		want: []string{
			`the workflow has no end node, so no task can finish; add a node of type "end" (with "result": "success") and an edge to it`,
			`nodes "a" → "b" → "a" form a cycle with no way out: no edge from them leads to an end; give one of them an edge that does ("on": "failed" to a HITL end, for example)`,
		},
	}, {
		// An end node exists, but no edge leads to it: the walk from the
		// start never gets there.
		id:    "end-apart",
		nodes: `"start": {"type": "start"}, "a": {"type": "task"}, "b": {"type": "task"}, "done": {"type": "end", "result": "success"}`,
		edges: `{"from": "start", "to": "a"}, {"from": "a", "to": "b"}, {"from": "b", "to": "a"}`,
		want: []string{
			`node "done": unreachable: no path leads here from the start node`,
			`no end node can be reached from the start: the walk from "start" leads only to "a", "b"; add an edge from one of them to a node of type "end"`,
			`nodes "a" → "b" → "a" form a cycle with no way out: no edge from them leads to an end; give one of them an edge that does ("on": "failed" to a HITL end, for example)`,
		},
		refused: true,
	}, {
		// An end node has an edge to it, but edges on passed and on failed
		// shadow it: navigation never takes it.
		id:    "end-shadowed",
		nodes: `"start": {"type": "start"}, "a": {"type": "task"}, "b": {"type": "task"}, "done": {"type": "end", "result": "success"}`,
		edges: `{"from": "start", "to": "a"}, {"from": "a", "to": "b", "on": "passed"}, {"from": "a", "to": "b", "on": "failed"}, {"from": "a", "to": "done"}, {"from": "b", "to": "a"}`,
		want: []string{
			`no end node can be reached from the start: the walk from "start" leads only to "a", "b"; add an edge from one of them to a node of type "end"`,
			`nodes "a" → "b" → "a" form a cycle with no way out: no edge from them leads to an end; give one of them an edge that does ("on": "failed" to a HITL end, for example)`,
		},
	}, {
		id: "cycle",
		nodes: `"start": {"type": "start"}, "triage": {"type": "task"}, "a": {"type": "task"}, "b": {"type": "task"},
		  "done": {"type": "end", "result": "success"}`,
		edges: `{"from": "start", "to": "triage"}, {"from": "triage", "to": "done", "on": "passed"}, {"from": "triage", "to": "a", "on": "failed"},
		  {"from": "a", "to": "b"}, {"from": "b", "to": "a"}`,
		want: []string{`nodes "a" → "b" → "a" form a cycle with no way out: no edge from them leads to an end; give one of them an edge that does ("on": "failed" to a HITL end, for example)`},
	}, {
		id:    "self-loop",
		nodes: `"start": {"type": "start"}, "a": {"type": "task"}, "done": {"type": "end", "result": "success"}`,
		edges: `{"from": "start", "to": "a"}, {"from": "a", "to": "a"}, {"from": "a", "to": "done", "on": "passed"}`,
		want:  []string{`node "a": the edge from "a" to itself has no "on", so the step can repeat forever (an unconditional edge never counts a retry); make it "on": "failed" beside a failed edge to an end and set "maxRetries", or remove it`},
	}, {
		id:    "gate",
		nodes: `"start": {"type": "start"}, "a": {"type": "gate"}, "done": {"type": "end", "result": "success"}`,
		edges: `{"from": "start", "to": "a"}, {"from": "a", "to": "done"}`,
		want:  []string{`node "a": the gate cannot fail: its only edges are unconditional, so failed leads to "done" just as passed does; add an edge with "on": "failed" back to the work it checks or to an end (a HITL end asks a person)`},
	}}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			file := filepath.Join(dir, tt.id+".json")
			writeTask(t, file, `{"nodes": {`+tt.nodes+`}, "edges": [`+tt.edges+`]}`)
			out, errOut, code := runCLI(t, "workflows", "validate", file)
			want := ""
			for _, p := range tt.want {
				want += file + ": " + p + "\n"
			}
			if code != 1 || out != want || !strings.Contains(errOut, "some workflows have errors") {
				t.Errorf("validate: exit %d, stdout:\n%s\nwant exit 1 and:\n%s\nstderr: %s", code, out, want, errOut)
			}
			// The task sits at the start's target; failed leads into the trap.
			task := filepath.Join(dir, "list", tt.id+".json")
			writeTask(t, task, `{"id": "`+tt.id+`", "metadata": {"workflowType": "`+tt.id+`"}}`)
			out, errOut, code = runCLI(t, "navigate", "--workflows", dir, "--task", task, "--record-start")
			if tt.refused {
				if code != 1 || !strings.Contains(errOut, "has errors") {
					t.Errorf("navigate: exit %d, want the workflow refused:\n%s%s", code, out, errOut)
				}
				return
			}
			if code != 0 {
				t.Fatalf("navigate: exit %d, want the workflow walked as flow walks it: %s", code, errOut)
			}
			first := readJSON(t, out)["currentStep"]
			out, errOut, code = runCLI(t, "navigate", "--workflows", dir, "--task", task, "--result", "failed")
			if code != 0 || readJSON(t, out)["action"] != "advance" {
				t.Errorf("navigate --result failed from %v: exit %d:\n%s%s", first, code, out, errOut)
			}
		})
	}
	out, _, _ := runCLI(t, "workflows", "list", "--workflows", dir)
	if got, want := strings.Count(out, "INVALID (taskd workflows validate)"), len(tests); got != want {
		t.Errorf("list marks %d workflows invalid, want %d:\n%s", got, want, out)
	}
}

// TestWorkflows_Unreadable: a workflow file taskd would load but cannot
// read (a FIFO, a directory at <id>.json, a <id>/workflow.json that is a
// socket's place) is said by every workflows command, as taskd doctor and
// the daemon say it: validate fails naming it, list warns on standard
// error, show and diagram of its id say why it is not there. None waits
// on the FIFO.
func TestWorkflows_Unreadable(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "piped.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "nested", "workflow.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(dir, "nested", "workflow.json")
	for _, c := range []struct {
		args       []string
		code       int
		out, error string
	}{
		{[]string{"validate", "--workflows", dir}, 1, fifo + ": read workflow: ", "some workflows have errors"},
		{[]string{"validate", "--workflows", dir}, 1, nested + ": read workflow: ", ""},
		{[]string{"list", "--workflows", dir}, 0, "quick-task", fifo + ": read workflow: "},
		{[]string{"list", "--json", "--workflows", dir}, 0, "quick-task", fifo + ": read workflow: "},
		{[]string{"show", "piped", "--workflows", dir}, 1, "", fifo + ": read workflow: "},
		{[]string{"diagram", "piped", "--workflows", dir}, 1, "", "FIFO"},
		{[]string{"show", "nested", "--workflows", dir}, 1, "", nested + ": read workflow: "},
	} {
		out, errOut, code := runCLI(t, append([]string{"workflows"}, c.args...)...)
		if code != c.code || !strings.Contains(out, c.out) || !strings.Contains(errOut, c.error) {
			t.Errorf("workflows %s: exit %d (want %d)\nstdout (want %q):\n%s\nstderr (want %q):\n%s", strings.Join(c.args, " "), code, c.code, c.out, out, c.error, errOut)
		}
	}
}

// TestWorkflows_ControlCharacters: a workflow file (a cloned project's,
// say) whose name, step names and edge labels carry escape sequences and
// line breaks reaches the terminal through list and diagram without
// them: no control character but the line ends, and a diagram line per
// node and edge.
func TestWorkflows_ControlCharacters(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	writeTask(t, filepath.Join(dir, "ev.json"), `{"name": "Evil\u001b]0;PWNED\u0007\u001b[31mred", "description": "x\u001b[2Jy",
	  "nodes": {"start": {"type": "start"}, "x": {"type": "task", "name": "S\u001b[1mtep\nclick n0 call evil()", "command": "true\r"},
	  "done": {"type": "end", "result": "success"}},
	  "edges": [{"from": "start", "to": "x"}, {"from": "x", "to": "done", "label": "ok\u009b2J\nthen"}]}`)
	for _, args := range [][]string{{"list"}, {"diagram", "ev"}} {
		out, errOut, code := runCLI(t, append(append([]string{"workflows"}, args...), "--workflows", dir)...)
		if code != 0 {
			t.Fatalf("workflows %s: exit %d: %s", args[0], code, errOut)
		}
		for _, r := range out {
			if r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0) {
				t.Errorf("workflows %s prints the control character %U:\n%q", args[0], r, out)
				break
			}
		}
		if args[0] == "diagram" {
			if lines := strings.Count(out, "\n"); lines != 1+3+2 {
				t.Errorf("the diagram has %d lines, want 6 (a label's line break ends a line):\n%s", lines, out)
			}
		}
	}
}
