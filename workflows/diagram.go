package workflows

import (
	"fmt"
	"strings"

	"github.com/taskd/taskd/internal/termtext"
	"github.com/taskd/taskd/navigator"
)

// Diagram renders a workflow as a Mermaid flowchart. Shapes say what a
// node is: start and success ends are stadiums, other ends hexagons, gates
// diamonds, forks and joins subroutines, other steps rectangles, each
// labelled with its name and its agent or command. Edges taken on "passed"
// are solid, on "failed" dotted; fork branches without an edge of their own
// are drawn as dotted "branch" edges.
func Diagram(wf *navigator.Workflow) string {
	return DiagramAt(wf, "")
}

// DiagramAt is Diagram with step current (when it is a node) highlighted.
func DiagramAt(wf *navigator.Workflow, current string) string {
	ids := map[string]string{}
	for i, id := range wf.Nodes() {
		ids[id] = fmt.Sprintf("n%d", i)
	}
	ref := func(id string) string {
		if r, ok := ids[id]; ok {
			return r
		}
		r := fmt.Sprintf("missing%d", len(ids))
		ids[id] = r
		return r
	}
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	for _, id := range wf.Nodes() {
		n := wf.Node(id)
		open, close := shape(n)
		fmt.Fprintf(&b, "  %s%s\"%s\"%s\n", ids[id], open, label(n), close)
	}
	for _, e := range wf.Edges() {
		arrow := "-->"
		if e.On == "failed" {
			arrow = "-.->"
		}
		text := e.On
		if e.Label != "" {
			text = strings.TrimPrefix(text+": "+e.Label, ": ")
		}
		if text != "" {
			arrow += "|\"" + escape(text) + "\"|"
		}
		fmt.Fprintf(&b, "  %s %s %s\n", ref(e.From), arrow, ref(e.To))
	}
	for _, id := range wf.Nodes() {
		n := wf.Node(id)
		for _, br := range n.Branches {
			if !hasEdge(wf, id, br.EntryStep) {
				fmt.Fprintf(&b, "  %s -.->|\"branch %s\"| %s\n", ids[id], escape(br.Name), ref(br.EntryStep))
			}
		}
	}
	if wf.Node(current) != nil {
		fmt.Fprintf(&b, "  classDef current stroke-width:4px,stroke:#e67e22\n  class %s current\n", ids[current])
	}
	return b.String()
}

func shape(n *navigator.Node) (open, close string) {
	switch {
	case n.Type == navigator.TypeStart || n.Terminal() == navigator.TerminalSuccess:
		return "([", "])"
	case n.Type == navigator.TypeEnd:
		return "{{", "}}"
	case n.Type == navigator.TypeGate:
		return "{", "}"
	case n.IsControl():
		return "[[", "]]"
	}
	return "[", "]"
}

func label(n *navigator.Node) string {
	parts := []string{n.Name}
	if n.Name == "" {
		parts[0] = n.ID
	}
	if n.IsControl() {
		parts[0] = n.Type + ": " + parts[0]
	}
	switch {
	case n.Command != "":
		parts = append(parts, "$ "+n.Command)
	case n.Agent != "":
		parts = append(parts, n.Agent)
	}
	if n.Terminal() == navigator.TerminalHITL {
		parts = append(parts, "human needed")
	}
	if n.MaxRetries > 0 {
		parts = append(parts, fmt.Sprintf("retries: %d", n.MaxRetries))
	}
	for i, p := range parts {
		parts[i] = escape(p)
	}
	return strings.Join(parts, "<br/>")
}

// escape makes text safe inside a quoted Mermaid label: a line break
// would end the statement, and an escape sequence reach the terminal the
// diagram is printed on, so control characters become spaces.
func escape(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;").Replace(termtext.Clean(s))
}

func hasEdge(wf *navigator.Workflow, from, to string) bool {
	for _, e := range wf.Outgoing(from) {
		if e.To == to {
			return true
		}
	}
	return false
}
