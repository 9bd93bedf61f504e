package daemon

import (
	"context"
	"errors"

	"github.com/taskd/taskd/taskfile"
)

// ErrUnknownWorkflow is returned (wrapped) for a workflowType no workflow
// directory defines.
var ErrUnknownWorkflow = errors.New("unknown workflow")

func (d *Daemon) checkWorkflow(l *list, id string) error { return nil }

func (d *Daemon) runFlow(ctx context.Context, l *list, t *taskfile.Task, sp spec) (*taskfile.Task, error) {
	return d.finish(ctx, l, t.ID, sp, Result{Error: errNoFlow.Error(), ExitCode: -1}, notStarted)
}

func (d *Daemon) recoverFlow(ctx context.Context, l *list, t *taskfile.Task, sp spec) (*taskfile.Task, error) {
	return nil, errNoFlow
}

func (d *Daemon) resumeTask(ctx context.Context, j *job) (*taskfile.Task, error) {
	return nil, errNoFlow
}

func (d *Daemon) resolveTask(ctx context.Context, j *job) (*taskfile.Task, error) {
	return nil, errNoFlow
}
