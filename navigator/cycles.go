package navigator

import (
	"fmt"
	"strings"
)

// sinkCycles returns the strongly connected sets of the graph on ids (its
// edges given by next, restricted to ids) that no edge leaves for another
// node of ids and that hold a cycle: more than one node, or one node with an
// edge to itself. Each set keeps the order of ids, and the sets come in the
// order of their first nodes.
//
// Among nodes that cannot reach an end, these are the cycles to break: every
// other such node leads into one of them, or to a dead end reported on its
// own.
func sinkCycles(ids []string, next func(string) []string) [][]string {
	in := map[string]bool{}
	for _, id := range ids {
		in[id] = true
	}
	comp := components(ids, func(id string) []string {
		var out []string
		for _, to := range next(id) {
			if in[to] {
				out = append(out, to)
			}
		}
		return out
	})
	members := map[int][]string{}
	var order []int
	for _, id := range ids {
		c := comp[id]
		if members[c] == nil {
			order = append(order, c)
		}
		members[c] = append(members[c], id)
	}
	var sets [][]string
	for _, c := range order {
		set := members[c]
		sink, cycle := true, len(set) > 1
		for _, x := range set {
			for _, to := range next(x) {
				switch {
				case in[to] && comp[to] != c:
					sink = false
				case to == x:
					cycle = true
				}
			}
		}
		if sink && cycle {
			sets = append(sets, set)
		}
	}
	return sets
}

// components numbers the strongly connected components of the graph on ids
// (Tarjan's algorithm): two nodes get the same number when each can reach
// the other.
func components(ids []string, next func(string) []string) map[string]int {
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	comp := map[string]int{}
	var stack []string
	var visit func(id string)
	visit = func(id string) {
		index[id] = len(index)
		low[id] = index[id]
		stack = append(stack, id)
		onStack[id] = true
		for _, to := range next(id) {
			if _, seen := index[to]; !seen {
				visit(to)
				low[id] = min(low[id], low[to])
			} else if onStack[to] {
				low[id] = min(low[id], index[to])
			}
		}
		if low[id] != index[id] {
			return
		}
		n := len(comp)
		for {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[top] = false
			comp[top] = n
			if top == id {
				break
			}
		}
	}
	for _, id := range ids {
		if _, seen := index[id]; !seen {
			visit(id)
		}
	}
	return comp
}

// closedWalk returns a walk along next that starts and ends at set[0] and
// passes every node of set, a strongly connected set: the shortest path to
// each node not yet passed, in the set's order, then back.
func closedWalk(set []string, next func(string) []string) []string {
	walk := []string{set[0]}
	passed := map[string]bool{set[0]: true}
	targets := append(append([]string(nil), set[1:]...), set[0])
	for _, id := range targets {
		if passed[id] && id != set[0] {
			continue
		}
		path := shortestPath(walk[len(walk)-1], id, set, next)
		for _, x := range path {
			passed[x] = true
		}
		walk = append(walk, path...)
	}
	return walk
}

// shortestPath returns the nodes after from on a shortest path of at least
// one edge from from to to inside set, to included; nil if there is none.
func shortestPath(from, to string, set []string, next func(string) []string) []string {
	in := map[string]bool{}
	for _, id := range set {
		in[id] = true
	}
	parent := map[string]string{}
	queue := []string{from}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		for _, x := range next(id) {
			if _, seen := parent[x]; seen || !in[x] {
				continue
			}
			parent[x] = id
			if x == to {
				var path []string
				for at := to; ; at = parent[at] {
					path = append([]string{at}, path...)
					if parent[at] == from {
						return path
					}
				}
			}
			queue = append(queue, x)
		}
	}
	return nil
}

// maxWalk is the most nodes a cycle is drawn with; a larger one is listed.
const maxWalk = 10

// describeCycle names the nodes of a strongly connected set: a closed walk
// through all of them ("a" → "b" → "a"), or for a large set the first
// maxWalk of them and how many more.
func describeCycle(set []string, next func(string) []string) string {
	if len(set) > maxWalk {
		q := make([]string, maxWalk)
		for i, id := range set[:maxWalk] {
			q[i] = fmt.Sprintf("%q", id)
		}
		return fmt.Sprintf("%s and %d more", strings.Join(q, ", "), len(set)-maxWalk)
	}
	walk := closedWalk(set, next)
	q := make([]string, len(walk))
	for i, id := range walk {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, " → ")
}
