package navigator_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/taskd/taskd/navigator"
)

// graph writes a workflow from a short notation. nodes: "id:type"
// separated by spaces, where type is start, task, gate, end (a success
// end), fail (a failure end), hitl (a HITL end), "fork=JOIN/ENTRY,ENTRY" or "join=FORK"; work
// steps get maxRetries 1. edges: "from>to" or "from>to:on", separated by
// spaces.
func graph(nodes, edges string) string {
	var ns, es []string
	for _, n := range strings.Fields(nodes) {
		id, typ, _ := strings.Cut(n, ":")
		var def string
		switch kind, arg, _ := strings.Cut(typ, "="); kind {
		case "end":
			def = `{"type": "end", "result": "success"}`
		case "fail":
			def = `{"type": "end", "result": "failure"}`
		case "hitl":
			def = `{"type": "end", "result": "blocked", "escalation": "hitl"}`
		case "task", "gate":
			def = fmt.Sprintf(`{"type": %q, "name": %q, "maxRetries": 1}`, kind, id)
		case "fork":
			join, entries, _ := strings.Cut(arg, "/")
			var bs []string
			for _, e := range strings.Split(entries, ",") {
				bs = append(bs, fmt.Sprintf(`%q: {"entryStep": %q}`, e, e))
			}
			def = fmt.Sprintf(`{"type": "fork", "join": %q, "branches": {%s}}`, join, strings.Join(bs, ", "))
		case "join":
			def = fmt.Sprintf(`{"type": "join", "fork": %q}`, arg)
		default:
			def = fmt.Sprintf(`{"type": %q}`, kind)
		}
		ns = append(ns, fmt.Sprintf("%q: %s", id, def))
	}
	for _, e := range strings.Fields(edges) {
		ft, on, _ := strings.Cut(e, ":")
		from, to, _ := strings.Cut(ft, ">")
		if on == "" {
			es = append(es, fmt.Sprintf(`{"from": %q, "to": %q}`, from, to))
		} else {
			es = append(es, fmt.Sprintf(`{"from": %q, "to": %q, "on": %q}`, from, to, on))
		}
	}
	return `{"nodes": {` + strings.Join(ns, ", ") + `}, "edges": [` + strings.Join(es, ", ") + `]}`
}

// ring writes steps s0 … s(n-1): with sep ":task" as nodes, with sep ">"
// as a ring of edges, s(n-1) leading back to s1.
func ring(n int, sep string) string {
	var out []string
	for i := 0; i < n; i++ {
		if sep != ">" {
			out = append(out, fmt.Sprintf("s%d%s", i, sep))
			continue
		}
		next := i + 1
		if next == n {
			next = 1
		}
		on := ""
		if i == 0 {
			on = ":failed" // s0's passed edge leads to the end
		}
		out = append(out, fmt.Sprintf("s%d>s%d%s", i, next, on))
	}
	return strings.Join(out, " ")
}

// TestValidate_Traps checks each trap's error, naming its nodes, and that
// traps stop a workflow in Strict mode only.
func TestValidate_Traps(t *testing.T) {
	tests := []struct {
		name         string
		nodes, edges string
		want         []string
	}{{
		name:  "no end node at all",
		nodes: "start:start draft:task review:task",
		edges: "start>draft draft>review review>draft:passed review>draft:failed",
		want: []string{
			`the workflow has no end node, so no task can finish; add a node of type "end" (with "result": "success") and an edge to it`,
			`nodes "draft" → "review" → "draft" form a cycle with no way out: no edge from them leads to an end; give one of them an edge that does ("on": "failed" to a HITL end, for example)`,
		},
	}, {
		name:  "no end reachable: the edge to the end is never taken",
		nodes: "start:start draft:task review:task done:end",
		edges: "start>draft draft>review review>draft:passed review>draft:failed review>done",
		want: []string{
			`no end node can be reached from the start: the walk from "start" leads only to "draft", "review"; add an edge from one of them to a node of type "end"`,
			`nodes "draft" → "review" → "draft" form a cycle with no way out: no edge from them leads to an end; give one of them an edge that does ("on": "failed" to a HITL end, for example)`,
		},
	}, {
		name:  "a cycle with no way out beside a way to the end",
		nodes: "start:start triage:task a:task b:task done:end",
		edges: "start>triage triage>done:passed triage>a:failed a>b b>a:passed b>a:failed",
		want: []string{
			`nodes "a" → "b" → "a" form a cycle with no way out: no edge from them leads to an end; give one of them an edge that does ("on": "failed" to a HITL end, for example)`,
		},
	}, {
		name:  "a cycle of three, walked through every node",
		nodes: "start:start triage:task a:task b:task c:task done:end",
		edges: "start>triage triage>done:passed triage>a:failed a>b b>c:passed b>a:failed c>a",
		want: []string{
			`nodes "a" → "b" → "c" → "a" form a cycle with no way out: no edge from them leads to an end; give one of them an edge that does ("on": "failed" to a HITL end, for example)`,
		},
	}, {
		name:  "only the cycle at the bottom is reported",
		nodes: "start:start triage:task a:task b:task c:task done:end",
		edges: "start>triage triage>done:passed triage>a:failed a>b:passed a>c:failed b>a c>c:passed c>c:failed",
		want: []string{
			`nodes "c" → "c" form a cycle with no way out: no edge from them leads to an end; give one of them an edge that does ("on": "failed" to a HITL end, for example)`,
		},
	}, {
		name:  "a cycle of more than ten nodes is listed",
		nodes: "start:start done:end " + ring(12, ":task"),
		edges: "start>s0 s0>done:passed " + ring(12, ">"),
		want: []string{
			`nodes "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10" and 1 more form a cycle with no way out: no edge from them leads to an end; give one of them an edge that does ("on": "failed" to a HITL end, for example)`,
		},
	}, {
		name:  "an unconditional self-loop",
		nodes: "start:start poll:task done:end",
		edges: "start>poll poll>poll poll>done:passed",
		want: []string{
			`node "poll": the edge from "poll" to itself has no "on", so the step can repeat forever (an unconditional edge never counts a retry); make it "on": "failed" beside a failed edge to an end and set "maxRetries", or remove it`,
		},
	}, {
		name:  "an unconditional self-loop that is the only edge",
		nodes: "start:start triage:task spin:task done:end",
		edges: "start>triage triage>done:passed triage>spin:failed spin>spin",
		want: []string{
			`node "spin": the edge from "spin" to itself has no "on", so the step can repeat forever (an unconditional edge never counts a retry); make it "on": "failed" beside a failed edge to an end and set "maxRetries", or remove it`,
		},
	}, {
		name:  "a gate with unconditional edges only",
		nodes: "start:start work:task check:gate done:end",
		edges: "start>work work>check check>done",
		want: []string{
			`node "check": the gate cannot fail: its only edges are unconditional, so failed leads to "done" just as passed does; add an edge with "on": "failed" back to the work it checks or to an end (a HITL end asks a person)`,
		},
	}, {
		name:  "a gate whose failed edge goes where passed goes",
		nodes: "start:start work:task check:gate commit:task done:end",
		edges: "start>work work>check check>commit:passed check>commit:failed commit>done",
		want: []string{
			`node "check": the gate cannot fail: failed leads to "commit" just as passed does; add an edge with "on": "failed" back to the work it checks or to an end (a HITL end asks a person)`,
		},
	}, {
		name:  "a gate whose unconditional edge joins its passed edge",
		nodes: "start:start work:task check:gate commit:task done:end",
		edges: "start>work work>check check>commit:passed check>commit commit>done",
		want: []string{
			`node "check": the gate cannot fail: failed leads to "commit" just as passed does; add an edge with "on": "failed" back to the work it checks or to an end (a HITL end asks a person)`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems := navigator.Validate(mustParse(t, graph(tt.nodes, tt.edges)))
			var got []string
			for _, p := range problems {
				if !p.Trap {
					t.Errorf("not a trap: %s", p)
					continue
				}
				got = append(got, p.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("traps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if got, want := navigator.Usable(problems, navigator.Strict), false; got != want {
				t.Errorf("Usable(Strict) = %v, want %v", got, want)
			}
			if got, want := navigator.Usable(problems, navigator.Compatible), true; got != want {
				t.Errorf("Usable(Compatible) = %v, want %v", got, want)
			}
		})
	}
}

// TestValidate_NoTrap checks workflows that look like traps and are not:
// each must validate without a single problem.
func TestValidate_NoTrap(t *testing.T) {
	tests := []struct {
		name         string
		nodes, edges string
	}{{
		name:  "a retry loop that escalates to a person",
		nodes: "start:start work:task check:gate done:end hitl:hitl",
		edges: "start>work work>check check>done:passed check>work:failed check>hitl:failed hitl>work:passed",
	}, {
		name:  "a failed self-loop beside an escalation (retry in place)",
		nodes: "start:start test:gate done:end hitl:hitl",
		edges: "start>test test>done:passed test>test:failed test>hitl:failed hitl>test:passed",
	}, {
		name:  "a cycle whose only way out is a failure end",
		nodes: "start:start a:task b:task gave_up:fail",
		edges: "start>a a>b b>a:passed b>gave_up:failed",
	}, {
		name:  "an unconditional self-loop that edges for both results shadow",
		nodes: "start:start work:task done:end",
		edges: "start>work work>done:passed work>done:failed work>work",
	}, {
		name:  "gates in fork branches leading straight into the join",
		nodes: "start:start fork:fork=join/tests,review tests:gate review:gate join:join=fork done:end hitl:hitl",
		edges: "start>fork fork>tests fork>review tests>join review>join join>done:passed join>hitl:failed hitl>fork:passed",
	}, {
		name:  "a gate whose failure takes the unconditional edge elsewhere",
		nodes: "start:start work:task check:gate fix:task done:end",
		edges: "start>work work>check check>done:passed check>fix fix>check",
	}, {
		name:  "tasks may ignore a failure",
		nodes: "start:start implement:task write_tests:task done:end",
		edges: "start>implement implement>write_tests write_tests>done",
	}, {
		name:  "a stage boundary",
		nodes: "start:start plan:task planned:end build:task done:end",
		edges: "start>plan plan>planned planned>build:passed build>done",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range navigator.Validate(mustParse(t, graph(tt.nodes, tt.edges))) {
				t.Errorf("%s", p)
			}
		})
	}
	t.Run("ship", func(t *testing.T) {
		for _, p := range navigator.Validate(mustParse(t, testWorkflows["ship"])) {
			t.Errorf("%s", p)
		}
	})
}

// TestProblem_Blocks checks which problems stop a workflow in each mode.
func TestProblem_Blocks(t *testing.T) {
	tests := []struct {
		p                  navigator.Problem
		strict, compatible bool
	}{
		{navigator.Problem{Reason: "an error"}, true, true},
		{navigator.Problem{Reason: "a trap", Trap: true}, true, false},
		{navigator.Problem{Reason: "a warning", Warning: true}, false, false},
	}
	for _, tt := range tests {
		if got := tt.p.Blocks(navigator.Strict); got != tt.strict {
			t.Errorf("%s: Blocks(Strict) = %v, want %v", tt.p.Reason, got, tt.strict)
		}
		if got := tt.p.Blocks(navigator.Compatible); got != tt.compatible {
			t.Errorf("%s: Blocks(Compatible) = %v, want %v", tt.p.Reason, got, tt.compatible)
		}
	}
}
