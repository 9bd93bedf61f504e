package plain

import (
	"context"
	"fmt"

	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/subagent"
)

// runOrchestration runs a leading command other than /read, /push and
// /run, in the order it appears, before the task's agent starts. ld holds
// the prompt being prepared: commands may add sections to it. A command
// that must wait returns an error for which asSuspended holds, with the
// task already written as waiting (or needs_human).
func runOrchestration(ctx context.Context, ld subagent.Leading, st prompt.Step) error {
	switch c := st.Cmd.(type) {
	case *prompt.Subtask, *prompt.Invoke:
		// Compiled into the task's fields when it is claimed (chain.CompileBlock).
		return nil
	case *prompt.Delegate:
		return ld.DelegateLine(ctx, st, c)
	case *prompt.Handoff:
		return ld.HandoffLine(ctx, st.Line, c)
	case *prompt.Converge:
		return ld.ConvergeLine(ctx, st.Line, c)
	}
	return fmt.Errorf("%s: this command is not available yet", st.Cmd)
}
