package navigator

import (
	"fmt"
	"strings"
)

// traps reports the ways a task can be caught in a workflow that flow
// navigates without complaint: no end reachable from the start, a cycle
// with no way out, an unconditional self-loop, and a gate whose failure
// goes where its success goes. Each is a Problem with Trap set: strict
// callers refuse such a workflow, compatible ones walk it as flow does.
//
// The walk considered is the one navigation can take, with the results
// taskd reports (passed and failed): see next.
func (v *validator) traps() {
	wf := v.wf
	for _, id := range wf.order {
		v.selfLoop(wf.nodes[id])
		if n := wf.nodes[id]; n.Type == TypeGate {
			v.gateFails(n)
		}
	}
	start := wf.Start()
	if start == "" || len(wf.out[start]) == 0 {
		return // reported by starts
	}
	reached := v.walk([]string{start}, v.next)
	ends := v.endIDs()
	canEnd := v.walk(ends, v.prev())
	var trapped []string
	deadEnd := false // a node with no way on at all, reported on its own
	for _, id := range wf.order {
		if reached[id] && !canEnd[id] {
			trapped = append(trapped, id)
			deadEnd = deadEnd || len(v.next(id)) == 0
		}
	}
	if !anyOf(reached, ends) && (len(ends) == 0 || !deadEnd) {
		v.noEnd(start, reached, len(ends) > 0)
	}
	for _, cycle := range sinkCycles(trapped, v.next) {
		if len(cycle) == 1 && v.loopsUnconditionally(cycle[0]) {
			continue // reported by selfLoop
		}
		v.trapf("", "nodes %s form a cycle with no way out: no edge from them leads to an end; give one of them an edge that does (\"on\": \"failed\" to a HITL end, for example)",
			describeCycle(cycle, v.next))
	}
}

// next returns the nodes navigation can move to from id, in order: the
// target of a start node's first edge; a fork's branch entries and its join
// (whose edges carry the fork's verdict on); an end node's or any other
// node's edges as flow picks them for passed and for failed (targets).
// Edges on other results, edges a matching edge shadows and edges to nodes
// that do not exist are left out.
func (v *validator) next(id string) []string {
	wf := v.wf
	n := wf.nodes[id]
	var out []string
	switch {
	case n == nil:
		return nil
	case n.Type == TypeStart:
		if len(wf.out[id]) > 0 {
			out = append(out, wf.edges[wf.out[id][0]].To)
		}
	case n.Type == TypeFork && wf.nodes[n.Join] != nil:
		for _, b := range n.Branches {
			out = append(out, b.EntryStep)
		}
		out = append(out, n.Join)
	default:
		out = append(v.targets(id, "passed"), v.targets(id, "failed")...)
	}
	var known []string
	for _, to := range out {
		if wf.nodes[to] != nil && !contains(known, to) {
			known = append(known, to)
		}
	}
	return known
}

// targets returns where flow's edge evaluation can go from id with result:
// the first edge on that result, or for failed a retry/escalate pair's two
// targets, or else the first unconditional edge.
func (v *validator) targets(id, result string) []string {
	var first, retry, escalate, unconditional string
	for _, e := range v.wf.Outgoing(id) {
		switch e.On {
		case result:
			first = keepFirst(first, e.To)
			if v.wf.isEnd(e.To) {
				escalate = keepFirst(escalate, e.To)
			} else {
				retry = keepFirst(retry, e.To)
			}
		case "":
			unconditional = keepFirst(unconditional, e.To)
		}
	}
	switch {
	case result == "failed" && retry != "" && escalate != "":
		return []string{retry, escalate}
	case first != "":
		return []string{first}
	case unconditional != "":
		return []string{unconditional}
	}
	return nil
}

// keepFirst returns have, or id when have is empty: of several edges, the
// first one counts.
func keepFirst(have, id string) string {
	if have != "" {
		return have
	}
	return id
}

// selfLoop reports an unconditional edge from a node to itself that
// navigation can take: it is taken on every result no other edge takes,
// and an unconditional edge never counts a retry, so nothing stops it.
func (v *validator) selfLoop(n *Node) {
	if v.loopsUnconditionally(n.ID) {
		v.trapf(n.ID, `the edge from %q to itself has no "on", so the step can repeat forever (an unconditional edge never counts a retry); make it "on": "failed" beside a failed edge to an end and set "maxRetries", or remove it`, n.ID)
	}
}

// loopsUnconditionally reports whether the edge navigation takes from id on
// some result is an unconditional edge back to id: the first unconditional
// edge, taken for a result that has no edge of its own.
func (v *validator) loopsUnconditionally(id string) bool {
	if n := v.wf.nodes[id]; n == nil || n.Type == TypeStart || n.Type == TypeFork {
		return false // a start follows its first edge, a fork its branches
	}
	if v.hasEdgeOn(id, "passed") && v.hasEdgeOn(id, "failed") {
		return false
	}
	for _, e := range v.wf.Outgoing(id) {
		if e.On == "" {
			return e.To == id
		}
	}
	return false
}

func (v *validator) hasEdgeOn(id, result string) bool {
	for _, e := range v.wf.Outgoing(id) {
		if e.On == result {
			return true
		}
	}
	return false
}

// gateFails reports a gate whose failure leads where its success leads, so
// that it cannot send work back. Leading into a join is different: a
// branch ends there, and its last result is the branch's verdict.
func (v *validator) gateFails(n *Node) {
	passed, failed := v.targets(n.ID, "passed"), v.targets(n.ID, "failed")
	if len(passed) != 1 || len(failed) == 0 {
		return // no way out: reported by wayOut
	}
	for _, to := range failed {
		if to != passed[0] {
			return
		}
	}
	if j := v.wf.nodes[passed[0]]; j != nil && j.Type == TypeJoin {
		return
	}
	how := "failed leads"
	if !v.hasEdgeOn(n.ID, "passed") && !v.hasEdgeOn(n.ID, "failed") {
		how = "its only edges are unconditional, so failed leads"
	}
	v.trapf(n.ID, `the gate cannot fail: %s to %q just as passed does; add an edge with "on": "failed" back to the work it checks or to an end (a HITL end asks a person)`, how, passed[0])
}

// noEnd reports a workflow whose walk from the start never reaches an end.
func (v *validator) noEnd(start string, reached map[string]bool, hasEnds bool) {
	if !hasEnds {
		v.trapf("", `the workflow has no end node, so no task can finish; add a node of type "end" (with "result": "success") and an edge to it`)
		return
	}
	var names []string
	for _, id := range v.wf.order {
		if reached[id] && id != start {
			names = append(names, fmt.Sprintf("%q", id))
		}
	}
	where := "nowhere"
	if len(names) > 0 {
		where = "only to " + strings.Join(names, ", ")
	}
	v.trapf("", `no end node can be reached from the start: the walk from %q leads %s; add an edge from one of them to a node of type "end"`, start, where)
}

// endIDs returns the end nodes in key order.
func (v *validator) endIDs() []string {
	var ends []string
	for _, id := range v.wf.order {
		if v.wf.nodes[id].Type == TypeEnd {
			ends = append(ends, id)
		}
	}
	return ends
}

// prev returns the reverse of next.
func (v *validator) prev() func(string) []string {
	in := map[string][]string{}
	for _, id := range v.wf.order {
		for _, to := range v.next(id) {
			in[to] = append(in[to], id)
		}
	}
	return func(id string) []string { return in[id] }
}

// walk returns the nodes reachable from roots through step, roots included.
func (v *validator) walk(roots []string, step func(string) []string) map[string]bool {
	seen := map[string]bool{}
	queue := append([]string(nil), roots...)
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if seen[id] || v.wf.nodes[id] == nil {
			continue
		}
		seen[id] = true
		queue = append(queue, step(id)...)
	}
	return seen
}

func (v *validator) trapf(node, format string, args ...any) {
	v.problems = append(v.problems, Problem{Node: node, Reason: fmt.Sprintf(format, args...), Trap: true})
}

func anyOf(set map[string]bool, ids []string) bool {
	for _, id := range ids {
		if set[id] {
			return true
		}
	}
	return false
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
