package navigator_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/taskd/taskd/navigator"
)

func mustParse(t testing.TB, src string) *navigator.Workflow {
	t.Helper()
	wf, err := navigator.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return wf
}

// TestParse_KeyOrder checks JavaScript's object key order: integer-like
// keys first in numeric order, then the rest as written; a repeated key
// keeps its first position and its last value.
func TestParse_KeyOrder(t *testing.T) {
	wf := mustParse(t, `{"nodes": {
		"b": {"type": "task"}, "10": {"type": "task"}, "a": {"type": "task", "name": "first"},
		"2": {"type": "task"}, "01": {"type": "task"}, "-1": {"type": "task"}, "4294967295": {"type": "task"},
		"4294967294": {"type": "task"}, "a": {"type": "task", "name": "second"},
		"f": {"type": "fork", "branches": {"z": {"entryStep": "b"}, "3": {"entryStep": "a"}, "y": {"entryStep": "2"}}}
	}, "edges": []}`)
	if got, want := wf.Nodes(), []string{"2", "10", "4294967294", "b", "a", "01", "-1", "4294967295", "f"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Nodes() = %q, want %q", got, want)
	}
	if got, want := wf.Node("a").Name, "second"; got != want {
		t.Errorf("repeated key: name = %q, want %q", got, want)
	}
	var branches []string
	for _, b := range wf.Node("f").Branches {
		branches = append(branches, b.Name+"→"+b.EntryStep)
	}
	if got, want := branches, []string{"3→a", "z→b", "y→2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("branches = %q, want %q", got, want)
	}
}

func TestParse_Fields(t *testing.T) {
	wf := mustParse(t, `{"id": "w", "name": "W", "description": "D", "extra": [1],
	"nodes": {
		"g": {"type": "gate", "name": "G", "description": "d", "instructions": "i", "agent": "ns:A", "stage": "s",
		      "emoji": "🧪", "maxRetries": 3, "context_files": ["a", "./b"], "command": "make test", "unknown": {}},
		"e": {"type": "end", "result": "blocked", "escalation": "hitl"},
		"f": {"type": "fork", "join": "j", "branches": {"x": {"entryStep": "g", "description": "X"}, "y": {"entryStep": "g"}}},
		"j": {"type": "join", "fork": "f", "strategy": "any-pass"},
		"s": {"type": "subflow", "workflow": "other"}
	},
	"edges": [{"from": "g", "to": "e", "on": "failed", "label": "L", "condition": "ignored"}, {"from": "g", "to": "j", "on": null}]}`)
	if got, want := [3]string{wf.ID, wf.Name, wf.Description}, [3]string{"w", "W", "D"}; got != want {
		t.Errorf("top level = %q, want %q", got, want)
	}
	g := wf.Node("g")
	want := navigator.Node{ID: "g", Type: "gate", Name: "G", Description: "d", Instructions: "i", Agent: "ns:A", Stage: "s",
		Emoji: "🧪", MaxRetries: 3, HasMaxRetries: true, ContextFiles: []string{"a", "./b"}, Command: "make test"}
	if !reflect.DeepEqual(*g, want) {
		t.Errorf("node g = %+v\nwant %+v", *g, want)
	}
	if e := wf.Node("e"); e.Result != "blocked" || e.Escalation != "hitl" || e.Terminal() != navigator.TerminalHITL {
		t.Errorf("node e = %+v", *e)
	}
	f := wf.Node("f")
	if f.Join != "j" || len(f.Branches) != 2 || !f.Branches[0].HasDescription || f.Branches[0].Description != "X" || f.Branches[1].HasDescription {
		t.Errorf("node f = %+v", *f)
	}
	if j := wf.Node("j"); j.Fork != "f" || j.Strategy != "any-pass" {
		t.Errorf("node j = %+v", *j)
	}
	if s := wf.Node("s"); s.Workflow != "other" || !s.IsWork() {
		t.Errorf("node s = %+v", *s)
	}
	if got, want := wf.Outgoing("g"), []navigator.Edge{{From: "g", To: "e", On: "failed", Label: "L"}, {From: "g", To: "j"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Outgoing(g) = %+v, want %+v", got, want)
	}
}

// TestParse_Types checks that fields of the wrong type are ignored and
// reported, all of them, while the rest of the workflow is kept.
func TestParse_Types(t *testing.T) {
	wf := mustParse(t, `{"name": 5, "nodes": {
		"start": {"type": "start"},
		"a": {"type": "task", "agent": ["x"], "maxRetries": "2", "context_files": ["ok", 3]},
		"b": {"type": "gate", "maxRetries": 1.5},
		"c": "not a node"
	}, "edges": [{"from": "start", "to": "a"}, {"from": "a", "to": "b", "on": true}, 7]}`)
	if a := wf.Node("a"); a.Agent != "" || a.MaxRetries != 2 || !reflect.DeepEqual(a.ContextFiles, []string{"ok"}) {
		t.Errorf("node a = %+v", *a)
	}
	if wf.Node("c") != nil {
		t.Errorf("node c was kept")
	}
	var got []string
	for _, p := range navigator.Validate(wf) {
		got = append(got, p.String())
	}
	for _, want := range []string{
		`"name" is a number, want a string`,
		`node "a": "agent" is an array, want a string`,
		`warning: node "a": "maxRetries" is the string "2"; write it as a number`,
		`node "a": element 1 of "context_files" is a number, want a string`,
		`node "b": "maxRetries" is 1.5, want a whole number of at least 0`,
		`node "c": the node is a string, want an object`,
		`edge 1 "on" is a boolean, want "passed" or "failed"`,
		`edge 2 is a number, want an object with from and to`,
	} {
		if !contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, strings.Join(got, "\n"))
		}
	}
}

func TestParse_NotAnObject(t *testing.T) {
	for _, src := range []string{``, `[]`, `{`, `{"nodes": {}} x`, `null`} {
		if _, err := navigator.Parse([]byte(src)); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", src)
		}
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
