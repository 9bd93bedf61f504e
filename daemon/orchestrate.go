package daemon

import (
	"context"
	"fmt"

	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/taskfile"
)

// runOrchestration runs a leading command other than /read, /push and /run.
func (d *Daemon) runOrchestration(ctx context.Context, l *list, t *taskfile.Task, sp spec, st prompt.Step) error {
	return fmt.Errorf("%s: this command is not available yet", st.Cmd)
}
