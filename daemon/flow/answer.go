package flow

import (
	"context"
	"fmt"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Answer goes on with a workflow task a person answered
// (metadata.taskd.resolve): at a human step, passed or failed advance the
// workflow and leave keeps it waiting; at the loop guard, continue allows
// another round of steps, abort and investigate stop the workflow.
func Answer(ctx context.Context, j *job.Job) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	var answer, kind string
	t, sp, err := claim(ctx, j, func(t *taskfile.Task, s task.Spec) bool {
		answer, kind = s.Resolve, ""
		kind, _ = t.Metadata.Object("taskd").Object("hitl").String("kind")
		return s.State == task.NeedsHuman && s.Resolve != "" && answer != "leave"
	})
	if err == job.ErrNotRunnable && answer == "leave" {
		return j.KeepWaiting(ctx)
	}
	if err != nil {
		return nil, err
	}
	l.Events.Append(eventlog.Event{Type: eventlog.HumanResolved, List: l.ID, Task: id, Parent: sp.Parent, Step: currentStep(t),
		Data: map[string]any{"answer": answer, "kind": kind}})
	clear := func(t *taskfile.Task) {
		m := task.Meta(t)
		m.Delete("resolve")
		m.Delete("hitl")
	}
	switch {
	case kind == "guard" && answer == "continue":
		t, err = l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
			clear(t)
			m := task.Meta(t)
			n, _ := m.Int("iteration")
			m.Set("guardAt", n+softGuard)
			return nil
		})
		if err != nil {
			return nil, err
		}
		return newFlow(j, t, sp).loop(ctx, "", afterNothing)
	case kind == "guard":
		return l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
			clear(t)
			if _, err := task.Move(t, task.Stop); err != nil {
				return err
			}
			m := task.Meta(t)
			m.Set("error", fmt.Sprintf("stopped at the loop guard (%s); the steps so far are in metadata.taskd.stepTrace; run it again with taskd start", answer))
			return nil
		})
	case answer == "passed" || answer == "failed":
		return newFlow(j, t, sp).loop(ctx, answer, afterAnswer)
	}
	return nil, fmt.Errorf("task %s: answer %q is not one of passed, failed or leave", id, answer)
}
