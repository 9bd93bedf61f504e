package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
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
	if forkState == nil && waitOf(t) != nil {
		return d.releaseWaiting(ctx, j) // a /handoff or /converge line's wait is over (acewait.go)
	}
	if forkState == nil {
		return d.resumeChildren(ctx, j)
	}
	verdict, branches := d.joinVerdict(l, t)
	// Archive first: if the daemon dies before the parent is written, the
	// parent still waits, its children are still done, and the join runs
	// again with the same verdict.
	for _, c := range childIDs(t) {
		if err := d.archive(ctx, l, c); err != nil && !isNotExist(err) {
			return nil, err
		}
	}
	t, sp, err := d.claim(ctx, j, func(t *taskfile.Task, s task.Spec) bool { return s.State == task.Waiting })
	if err != nil {
		return nil, err
	}
	forkStep, _ := forkState.String("forkStep")
	strategy, _ := forkState.String("joinStrategy")
	l.Events.Append(eventlog.Event{Type: eventlog.JoinCompleted, List: l.ID, Task: id, Parent: sp.Parent, Step: forkStep,
		Data: map[string]any{"result": verdict, "strategy": strategy, "branches": branches}})
	l.Events.Append(eventlog.Event{Type: eventlog.TaskResumed, List: l.ID, Task: id, Parent: sp.Parent, Step: forkStep})
	f := d.newFlow(j, t, sp)
	return f.loop(ctx, verdict, func(t *taskfile.Task) {
		t.Metadata.Delete("forkState")
		task.Meta(t).Delete("children")
	})
}

// resolveTask continues a task a person answered (metadata.taskd.resolve):
// for a workflow's human step, passed or failed advance the workflow and
// leave keeps it waiting; for a loop guard, continue allows another round
// of steps, abort and investigate stop the workflow.
func (d *Daemon) resolveTask(ctx context.Context, j *job.Job) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	if t, err, ok := d.resolveSubagent(ctx, j); ok {
		return t, err // a converge or handoff question (aceresolve.go)
	}
	var answer, kind string
	t, sp, err := d.claim(ctx, j, func(t *taskfile.Task, s task.Spec) bool {
		answer, kind = s.Resolve, ""
		kind, _ = t.Metadata.Object("taskd").Object("hitl").String("kind")
		return s.State == task.NeedsHuman && s.Resolve != "" && answer != "leave"
	})
	if err == errNotRunnable && answer == "leave" {
		return d.leavePending(ctx, j)
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
		return d.newFlow(j, t, sp).loop(ctx, "", nil)
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
		return d.newFlow(j, t, sp).loop(ctx, answer, clear)
	}
	return nil, fmt.Errorf("task %s: answer %q is not one of passed, failed or leave", id, answer)
}

// leavePending records a "leave" answer: the task keeps waiting for a
// person, the answer is consumed.
func (d *Daemon) leavePending(ctx context.Context, j *job.Job) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	t, err := l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
		task.Meta(t).Delete("resolve")
		return nil
	})
	if err == nil {
		l.Events.Append(eventlog.Event{Type: eventlog.HumanResolved, List: l.ID, Task: id, Step: currentStep(t), Data: map[string]any{"answer": "leave"}})
	}
	return t, err
}

// recoverFlow handles a workflow task a dead daemon left running. If the
// step that was running had finished (its result.json exists and the step
// trace does not have it yet), its result is applied; otherwise the step's
// leftover processes are killed and the task runs the step again.
func (d *Daemon) recoverFlow(ctx context.Context, j *job.Job, t *taskfile.Task, sp task.Spec) (*taskfile.Task, error) {
	l := j.List
	n := lastRunDir(l, t.ID)
	applied, _ := t.Metadata.Object("taskd").Int("attempt")
	if n > int(applied) {
		runDir := l.RunDir(t.ID, n)
		if res, ok := agent.ReadResult(runDir); ok {
			switch out := agent.OutcomeOf(res); out {
			case agent.Cancelled, agent.NotStarted:
				sp.Attempt = n
				return d.finish(ctx, j, sp, res, out)
			}
			d.log.Info("applying the result of a step that ended while the daemon was down", "list", l.ID, "task", t.ID, "attempt", n)
			f := d.newFlow(j, t, sp)
			f.run = n
			result := "failed"
			if res.Success {
				result = "passed"
			}
			return f.loop(ctx, result, nil)
		}
		agent.KillLeftover(runDir)
		sp.Attempt = n
	}
	res := agent.Result{Error: "interrupted: the daemon stopped while the step ran", ExitCode: -1}
	res.Summary = res.Error
	return d.finish(ctx, j, sp, res, agent.Interrupted)
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
