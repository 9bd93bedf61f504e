package flow

import (
	"context"
	"errors"
	"io/fs"

	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Join joins a waiting workflow fork whose branches have all ended: the
// verdict of its branches, by the join's strategy, advances the parent
// past the fork; the children are archived, forkState is cleared, and the
// workflow goes on. Archiving comes first: if the daemon dies before the
// parent is written, the parent still waits, its children are still done,
// and the join runs again with the same verdict.
func Join(ctx context.Context, j *job.Job, t *taskfile.Task) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	forkState := t.Metadata.Object("forkState")
	verdict, branches := joinVerdict(l, t)
	// Archive first: if the daemon dies before the parent is written, the
	// parent still waits, its children are still done, and the join runs
	// again with the same verdict.
	for _, c := range children.WaitsFor(t) {
		if err := archive(ctx, l, c); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	t, sp, err := claim(ctx, j, func(t *taskfile.Task, s task.Spec) bool { return s.State == task.Waiting })
	if err != nil {
		return nil, err
	}
	forkStep, _ := forkState.String("forkStep")
	strategy, _ := forkState.String("joinStrategy")
	l.Events.Append(eventlog.Event{Type: eventlog.JoinCompleted, List: l.ID, Task: id, Parent: sp.Parent, Step: forkStep,
		Data: map[string]any{"result": verdict, "strategy": strategy, "branches": branches}})
	l.Events.Append(eventlog.Event{Type: eventlog.TaskResumed, List: l.ID, Task: id, Parent: sp.Parent, Step: forkStep})
	f := newFlow(j, t, sp)
	return f.loop(ctx, verdict, afterJoin)
}

// claim claims the job's workflow task if runnable accepts it: a workflow
// numbers its runs as it runs its steps.
func claim(ctx context.Context, j *job.Job, runnable func(*taskfile.Task, task.Spec) bool) (*taskfile.Task, task.Spec, error) {
	c, err := j.Claim(ctx, func(t *taskfile.Task, sp *task.Spec) error {
		if !runnable(t, *sp) {
			return job.ErrNotRunnable
		}
		return nil
	})
	if err != nil {
		return nil, task.Spec{}, err
	}
	return c.Task, c.Spec, nil
}
