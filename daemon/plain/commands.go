package plain

import (
	"context"
	"fmt"

	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// runOrchestration runs a leading command other than /read, /push and /run,
// in the order it appears, before the task's agent starts. p is the prompt
// being prepared: commands may add sections to it. A command that must wait
// returns an error for which asSuspended holds, with the task already
// written as waiting (or needs_human).
func runOrchestration(ctx context.Context, j *job.Job, t *taskfile.Task, sp task.Spec, st prompt.Step, p *prepared) error {
	switch c := st.Cmd.(type) {
	case *prompt.Subtask, *prompt.Invoke:
		// Compiled into the task's fields when it is claimed (chain.CompileBlock).
		return nil
	case *prompt.Delegate:
		return subagent.DelegateLine(ctx, j, t, st, c, p.script)
	case *prompt.Handoff:
		return subagent.HandoffLine(ctx, j, t, sp, st.Line, c, &p.results)
	case *prompt.Converge:
		return subagent.ConvergeLine(ctx, j, t, sp, st.Line, c, &p.results)
	}
	return fmt.Errorf("%s: this command is not available yet", st.Cmd)
}
