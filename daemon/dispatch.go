package daemon

import (
	"context"

	"github.com/taskd/taskd/daemon/flow"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/plain"
	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/taskfile"
)

// work runs job j to its end: the handler of its kind of task does it,
// given the task file as the loop last read it when it started the job
// (j.Seen, handRead), or else as it is when the job starts.
func (d *Daemon) work(ctx context.Context, j *job.Job) (*taskfile.Task, error) {
	if j.Kind == job.Fire {
		return d.fire(ctx, j) // recur.go
	}
	t := j.Seen
	if t == nil || t.ID != j.ID {
		var err error
		if t, err = j.List.Dir.Read(j.ID); err != nil {
			return nil, err
		}
		j.Seen = t
	}
	return handlerFor(j.Kind, t).Do(ctx, j, t)
}

// handlerFor returns the handler of a job of kind on task t: the
// bookkeeping jobs (a cancel, a delivery) are the daemon's own; a task
// suspended by or asked about subagents is package subagent's; a
// workflow, package flow's; any other task, package plain's.
func handlerFor(kind job.Kind, t *taskfile.Task) job.Handler {
	switch {
	case kind == job.Cancel:
		return cancellation{}
	case kind == job.Deliver:
		return delivery{}
	case kind == job.Settle:
		return settlement{}
	case kind == job.Answer && job.AsksPermission(t):
		return permission{}
	case subagent.Owns(kind, t):
		return subagent.Tasks{}
	case flow.Is(t):
		return flow.Tasks{}
	}
	return plain.Tasks{}
}

// cancellation cancels a task that is not running, and its subtree: its
// metadata.taskd.cancel was set while it waited, a task above it was
// cancelled, or (queued) its parent ended without starting it.
type cancellation struct{}

func (cancellation) Do(ctx context.Context, j *job.Job, _ *taskfile.Task) (*taskfile.Task, error) {
	return j.CancelIdle(ctx)
}

// delivery sends an ended child's result to its parent (deliver.go).
type delivery struct{}

func (delivery) Do(ctx context.Context, j *job.Job, _ *taskfile.Task) (*taskfile.Task, error) {
	return deliverResult(ctx, j)
}

// settlement ends a task without running it (settle.go).
type settlement struct{}

func (settlement) Do(ctx context.Context, j *job.Job, _ *taskfile.Task) (*taskfile.Task, error) {
	return j.Settle(ctx)
}

// permission takes a person's answer about denied tool calls.
type permission struct{}

func (permission) Do(ctx context.Context, j *job.Job, _ *taskfile.Task) (*taskfile.Task, error) {
	return j.AnswerPermission(ctx)
}

var (
	_ job.Handler = permission{}
	_ job.Handler = cancellation{}
	_ job.Handler = delivery{}
	_ job.Handler = settlement{}
)
