package flow

import (
	"context"
	"fmt"

	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Tasks is the job.Handler of workflow tasks: it runs them, joins a fork
// whose branches have ended, takes a person's answer, and recovers a step
// a dead daemon left.
type Tasks struct{}

var _ job.Handler = Tasks{}

// Do implements job.Handler.
func (Tasks) Do(ctx context.Context, j *job.Job, t *taskfile.Task) (*taskfile.Task, error) {
	switch j.Kind {
	case job.Run:
		c, err := j.ClaimToStart(ctx, func(t *taskfile.Task, sp *task.Spec) error {
			if !job.Pending(t, *sp, j.Now()) {
				return job.ErrNotRunnable
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		defer j.Slot.Release()
		if err := j.Slot.Acquire(ctx); err != nil {
			return j.NotStarted(ctx, c, nil, err)
		}
		if err := j.Start(ctx, c); err != nil {
			return j.NotStarted(ctx, c, nil, err)
		}
		return Run(ctx, j, c.Task, c.Spec)
	case job.Resume:
		return Join(ctx, j, t)
	case job.Answer:
		return Answer(ctx, j)
	case job.Recover:
		sp, err := task.ReadSpec(t)
		if err != nil || !sp.State.Claimed() {
			return nil, job.ErrNotRunnable
		}
		return Recover(ctx, j, t, sp)
	}
	return nil, fmt.Errorf("%s of a workflow: %w", j.Kind, job.ErrNoHandler)
}

// Is reports whether t is a workflow task: it names a workflowType.
func Is(t *taskfile.Task) bool {
	wf, _ := t.Metadata.String("workflowType")
	return wf != ""
}
