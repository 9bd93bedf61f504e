package daemon

import (
	"context"
	"errors"
	"io/fs"

	"github.com/taskd/taskd/daemon/flow"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/plain"
	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/taskfile"
)

// resumeTask continues a waiting parent whose children have all ended: a
// task suspended by a /handoff or /converge line becomes pending and runs
// its prompt again (releaseWaiting); a
// plain parent gets a new attempt with their results (resumeChildren); a
// workflow fork joins: the verdict of its branches (by the join's strategy)
// advances the parent past the fork, the children are archived and
// forkState is cleared, and the workflow goes on.
func (d *Daemon) resumeTask(ctx context.Context, j *job.Job) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	t, err := l.Dir.Read(id)
	if err != nil {
		return nil, err
	}
	forkState := t.Metadata.Object("forkState")
	if forkState == nil && subagent.WaitOf(t) != nil {
		return subagent.Release(ctx, j) // a /handoff or /converge line's wait is over (acewait.go)
	}
	if forkState == nil {
		return plain.Resume(ctx, j)
	}
	return flow.Join(ctx, j, t)
}

// resolveTask continues a task a person answered (metadata.taskd.resolve):
// for a workflow's human step, passed or failed advance the workflow and
// leave keeps it waiting; for a loop guard, continue allows another round
// of steps, abort and investigate stop the workflow.
func (d *Daemon) resolveTask(ctx context.Context, j *job.Job) (*taskfile.Task, error) {
	if t, err, ok := subagent.Answer(ctx, j); ok {
		return t, err // a converge or handoff question (aceresolve.go)
	}
	return flow.Answer(ctx, j)
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
