package daemon

import (
	"context"
	"fmt"

	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/taskfile"
)

// runOrchestration runs a leading command other than /read, /push and /run,
// in the order it appears, before the task's agent starts.
func (d *Daemon) runOrchestration(ctx context.Context, l *list, t *taskfile.Task, sp spec, st prompt.Step) error {
	switch st.Cmd.(type) {
	case *prompt.Subtask, *prompt.Invoke:
		// Compiled into the task's fields when it is claimed (subtask2.go).
		return nil
	}
	return fmt.Errorf("%s: this command is not available yet", st.Cmd)
}
