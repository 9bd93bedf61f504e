package navigator

import (
	"fmt"
	"slices"
	"strings"
)

// Validate checks a workflow far more strictly than flow does and returns
// every problem it finds, in a stable order: fields of the wrong type, then
// the workflow as a whole, then each node in key order, then the edges. A
// workflow without errors can be navigated from its start to an end: it
// has one start node with an edge out, every edge joins known nodes, every
// node is reachable, every work step and join has a way out for both
// results, forks and joins pair up, and every retry/escalate pair has a
// maxRetries. Last come the traps (Problem.Trap), which only Strict mode
// counts: no end reachable from the start, a cycle with no way out, an
// unconditional self-loop, a gate that cannot fail. The rules are listed in
// docs/workflows.md.
func Validate(wf *Workflow) []Problem {
	v := &validator{wf: wf}
	v.problems = append(v.problems, wf.problems...)
	if !wf.hasNodes {
		v.errorf("", `the workflow has no "nodes" object`)
	}
	if !wf.hasEdges {
		v.errorf("", `the workflow has no "edges" array`)
	}
	v.starts()
	for _, id := range wf.order {
		v.node(wf.nodes[id])
	}
	v.edges()
	v.reachable()
	v.traps()
	return v.problems
}

type validator struct {
	wf       *Workflow
	problems []Problem
}

func (v *validator) errorf(node, format string, args ...any) {
	v.problems = append(v.problems, Problem{Node: node, Reason: fmt.Sprintf(format, args...)})
}

func (v *validator) warnf(node, format string, args ...any) {
	v.problems = append(v.problems, Problem{Node: node, Reason: fmt.Sprintf(format, args...), Warning: true})
}

// starts checks that there is exactly one start node and that it leads
// somewhere: navigation begins at the target of its first edge.
func (v *validator) starts() {
	wf := v.wf
	var starts []string
	for _, id := range wf.order {
		if wf.nodes[id].Type == TypeStart {
			starts = append(starts, id)
		}
	}
	if len(starts) == 0 {
		if wf.hasNodes {
			v.errorf("", `there is no node of type "start"`)
		}
		return
	}
	for _, id := range starts[1:] {
		v.errorf(id, "a second start node; only the first, %q, is ever used", starts[0])
	}
	out := wf.out[starts[0]]
	switch {
	case len(out) == 0:
		v.errorf(starts[0], "the start node has no outgoing edge")
	case len(out) > 1:
		v.errorf(starts[0], "the start node has %d outgoing edges; only the first (to %q) is ever followed", len(out), wf.edges[out[0]].To)
	}
}

var (
	knownTypes   = map[string]bool{TypeStart: true, TypeEnd: true, TypeTask: true, TypeGate: true, TypeSubflow: true, TypeFork: true, TypeJoin: true}
	endResults   = map[string]bool{"success": true, "failure": true, "blocked": true, "cancelled": true}
	escalations  = map[string]bool{"hitl": true, "alert": true, "ticket": true}
	strategyName = map[string]bool{StrategyAllPass: true, StrategyAnyPass: true}
)

func (v *validator) node(n *Node) {
	wf := v.wf
	id := n.ID
	switch {
	case n.Type == "":
		v.errorf(id, `the node has no "type"`)
	case !knownTypes[n.Type]:
		v.errorf(id, "unknown node type %q (want start, end, task, gate, subflow, fork or join)", n.Type)
	}
	if n.Command != "" && n.Type != TypeTask && n.Type != TypeGate {
		v.errorf(id, `"command" is only allowed on task and gate nodes`)
	}
	if n.Command != "" && n.Agent != "" {
		v.errorf(id, `the node has both "command" and "agent"; a step runs one or the other`)
	}
	switch n.Type {
	case TypeEnd:
		switch {
		case n.Result == "":
			v.warnf(id, `the end node has no "result"; it counts as a failure`)
		case !endResults[n.Result]:
			v.errorf(id, "unknown end result %q (want success, failure, blocked or cancelled)", n.Result)
		}
		if n.Escalation != "" && !escalations[n.Escalation] {
			v.errorf(id, "unknown escalation %q (want hitl, alert or ticket)", n.Escalation)
		}
	case TypeFork:
		v.fork(n)
	case TypeJoin:
		v.join(n)
		v.wayOut(n)
	case TypeSubflow:
		v.warnf(id, "subflow nodes do not run their workflow %q; the step runs like a task with no agent", n.Workflow)
		v.wayOut(n)
	case TypeStart:
	default:
		v.wayOut(n)
	}
	v.retryPair(n)
	for _, e := range wf.Outgoing(id) {
		if e.On != "" && e.On != "passed" && e.On != "failed" && e.On != neverMatches {
			v.warnf(id, "the edge to %q is taken on %q, a result taskd never reports (results are passed and failed)", e.To, e.On)
		}
	}
}

// wayOut checks that a work step or join can be left whatever the result:
// by an unconditional edge, or by edges for both passed and failed.
func (v *validator) wayOut(n *Node) {
	out := v.wf.Outgoing(n.ID)
	if len(out) == 0 {
		v.errorf(n.ID, "no way out: the %s has no outgoing edge", n.Type)
		return
	}
	has := map[string]bool{}
	for _, e := range out {
		has[e.On] = true
	}
	if has[""] {
		return
	}
	for _, result := range []string{"passed", "failed"} {
		if !has[result] {
			v.errorf(n.ID, "no way out when the step %s: add an edge with \"on\": %q or an unconditional one", result, result)
		}
	}
}

// retryPair checks a node whose failed edges go both to an end and
// elsewhere: flow retries while the task's retry count is below maxRetries,
// so the budget must be written down.
func (v *validator) retryPair(n *Node) {
	var retry, escalate string
	for _, e := range v.wf.Outgoing(n.ID) {
		if e.On != "failed" {
			continue
		}
		if v.wf.isEnd(e.To) {
			if escalate == "" {
				escalate = e.To
			}
		} else if retry == "" {
			retry = e.To
		}
	}
	if retry != "" && escalate != "" && !n.HasMaxRetries {
		v.errorf(n.ID, `retry/escalate pair (failed → %q, failed → %q) without "maxRetries": set it (0 escalates on the first failure)`, retry, escalate)
	}
}

func (v *validator) fork(n *Node) {
	wf := v.wf
	id := n.ID
	switch j := wf.nodes[n.Join]; {
	case n.Join == "":
		v.errorf(id, `the fork has no "join"`)
	case j == nil:
		v.errorf(id, "the fork's join %q does not exist", n.Join)
	case j.Type != TypeJoin:
		v.errorf(id, "the fork's join %q is %s node, not a join", n.Join, article(j.Type))
	case j.Fork != id:
		v.errorf(id, "the fork's join %q names %q as its fork; fork and join must name each other", n.Join, j.Fork)
	}
	if len(n.Branches) == 0 {
		v.errorf(id, "the fork has no branches")
	}
	for _, b := range n.Branches {
		e := wf.nodes[b.EntryStep]
		switch {
		case b.EntryStep == "":
			v.errorf(id, "branch %q has no entryStep", b.Name)
		case e == nil:
			v.errorf(id, "branch %q enters at %q, which does not exist", b.Name, b.EntryStep)
		case e.Type == TypeFork:
			v.errorf(id, "branch %q enters at the fork %q; forks do not nest", b.Name, b.EntryStep)
		case !e.IsWork():
			v.errorf(id, "branch %q enters at %q, %s node; a branch starts with a work step", b.Name, b.EntryStep, article(e.Type))
		}
		for _, k := range b.Settings.Keys() {
			if !slices.Contains(BranchSettings, k) {
				v.errorf(id, "branch %q sets metadata.taskd.%s; a branch may set %s", b.Name, k, strings.Join(BranchSettings, ", "))
			}
		}
	}
}

func (v *validator) join(n *Node) {
	wf := v.wf
	id := n.ID
	switch f := wf.nodes[n.Fork]; {
	case n.Fork == "":
		v.errorf(id, `the join has no "fork"`)
	case f == nil:
		v.errorf(id, "the join's fork %q does not exist", n.Fork)
	case f.Type != TypeFork:
		v.errorf(id, "the join's fork %q is %s node, not a fork", n.Fork, article(f.Type))
	case f.Join != id:
		v.errorf(id, "the join's fork %q names %q as its join; fork and join must name each other", n.Fork, f.Join)
	}
	if n.Strategy != "" && !strategyName[n.Strategy] {
		v.errorf(id, "unknown join strategy %q (want all-pass or any-pass)", n.Strategy)
	}
}

// edges checks that every edge joins two nodes that exist.
func (v *validator) edges() {
	for i, e := range v.wf.edges {
		switch {
		case e.From == "":
			v.errorf("", `edge %d has no "from"`, i)
		case v.wf.nodes[e.From] == nil:
			v.errorf("", "edge %d comes from %q, which does not exist", i, e.From)
		}
		switch {
		case e.To == "":
			v.errorf("", `edge %d has no "to"`, i)
		case v.wf.nodes[e.To] == nil:
			v.errorf("", "edge %d from %q goes to %q, which does not exist", i, e.From, e.To)
		}
	}
}

// reachable reports nodes that navigation can never reach from the start
// node. A fork reaches its branch entries and its join (a verdict on the
// fork continues from the join).
func (v *validator) reachable() {
	wf := v.wf
	start := wf.Start()
	if start == "" {
		return
	}
	seen := map[string]bool{}
	stack := []string{start}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := wf.nodes[id]
		if n == nil || seen[id] {
			continue
		}
		seen[id] = true
		for _, i := range wf.out[id] {
			stack = append(stack, wf.edges[i].To)
		}
		if n.Type == TypeFork {
			stack = append(stack, n.Join)
			for _, b := range n.Branches {
				stack = append(stack, b.EntryStep)
			}
		}
	}
	for _, id := range wf.order {
		if !seen[id] && wf.nodes[id].Type != TypeStart {
			v.errorf(id, "unreachable: no path leads here from the start node")
		}
	}
}

// article prefixes a node type with "a" or "an".
func article(typ string) string {
	if typ != "" && strings.ContainsRune("aeiou", rune(typ[0])) {
		return "an " + typ
	}
	return "a " + typ
}
