package plain

import (
	"context"
	"fmt"

	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Tasks is the job.Handler of plain tasks: it runs them, resumes a parent
// whose children have ended, takes a person's verdict for a gate that had
// none, and recovers an attempt a dead daemon left.
type Tasks struct{}

var _ job.Handler = Tasks{}

// Do implements job.Handler.
func (Tasks) Do(ctx context.Context, j *job.Job, t *taskfile.Task) (*taskfile.Task, error) {
	switch j.Kind {
	case job.Run:
		return Run(ctx, j)
	case job.Resume:
		return Resume(ctx, j)
	case job.Answer:
		return Answer(ctx, j) // a person's verdict (verdict.go)
	case job.Recover:
		sp, err := task.ReadSpec(t)
		if err != nil || !sp.State.Claimed() {
			return nil, job.ErrNotRunnable
		}
		return Recover(ctx, j, sp)
	}
	return nil, fmt.Errorf("%s of a plain task: %w", j.Kind, job.ErrNoHandler)
}
