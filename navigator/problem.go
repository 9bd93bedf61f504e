package navigator

import (
	"fmt"
	"strings"
)

// A Problem is something wrong with a workflow definition.
type Problem struct {
	File    string // the definition's file; set by loaders, empty from Validate
	Node    string // the node concerned; empty for the workflow as a whole
	Reason  string
	Warning bool // the workflow still works as written; errors make it unusable
	// Trap marks an error that flow does not mind: the workflow navigates
	// as flow navigates it, but a task walking it can be caught (no end
	// reachable, a cycle with no way out, an unconditional self-loop, a
	// gate that cannot fail). It counts in Strict mode only.
	Trap bool
}

func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		b.WriteString(": ")
	}
	if p.Warning {
		b.WriteString("warning: ")
	}
	if p.Node != "" {
		fmt.Fprintf(&b, "node %q: ", p.Node)
	}
	b.WriteString(p.Reason)
	return b.String()
}

// A Mode says which problems make a workflow unusable.
type Mode int

const (
	// Strict refuses a workflow with any error, traps included. The
	// daemon and `taskd workflows` judge workflows this way.
	Strict Mode = iota
	// Compatible refuses a workflow only for errors flow would trip over
	// too, and walks traps as flow does. `taskd navigate`, which answers
	// as flow's Navigate answers, judges workflows this way.
	Compatible
)

// Blocks reports whether p makes its workflow unusable in mode m.
func (p Problem) Blocks(m Mode) bool {
	return !p.Warning && !(p.Trap && m == Compatible)
}

// Usable reports whether a workflow with these problems may be navigated
// in mode m.
func Usable(problems []Problem, m Mode) bool {
	for _, p := range problems {
		if p.Blocks(m) {
			return false
		}
	}
	return true
}

// HasErrors reports whether problems holds anything other than warnings,
// traps included: the workflow is not usable in Strict mode.
func HasErrors(problems []Problem) bool {
	return !Usable(problems, Strict)
}
