package plain

import (
	"context"
	"slices"
	"strings"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/chain"
	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Resume continues a parent whose children have all ended: a new
// attempt whose prompt carries the children's results in order (for the
// claude profile, the first attempt's session is resumed and the prompt is
// the results alone). The children move to the parent's done collection.
func Resume(ctx context.Context, j *job.Job) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	var kids []string
	c, err := claimRun(ctx, j, func(t *taskfile.Task, s task.Spec) bool {
		if s.State != task.Waiting || len(children.Outstanding(l.Dir, t)) > 0 {
			return false
		}
		ch := task.RecordOf(t).Children
		kids = append(task.Strings(ch, children.Parallel), task.Strings(ch, children.Sequential)...)
		for _, k := range kids {
			for _, coll := range []string{children.Parallel, children.Sequential} {
				if slices.Contains(task.Strings(ch, coll), k) {
					children.MoveChild(t, coll, children.Done, k)
				}
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	t, sp := c.Task, c.Spec
	if !wantsResume(l, kids) {
		// Only parallel items, a plan or return chains ran: the task's own
		// agent has done its part; it completes now, its returns next.
		// The claim numbered a new attempt that does not run: go back to
		// the last one, whose result stands.
		sp.Attempt--
		if _, err := l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
			rec := task.RecordOf(t)
			rec.Attempt, rec.RunDir = sp.Attempt, area.RelRunDir(id, sp.Attempt)
			task.Store(t, rec)
			return nil
		}, taskfile.NoDirSync); err != nil {
			return nil, err
		}
		res, _ := agent.ReadResult(l.RunDir(id, sp.Attempt))
		res.Success = true
		return afterAttempt(ctx, j, sp, res, agent.Finished)
	}
	l.Events.Append(eventlog.Event{Type: eventlog.TaskResumed, List: l.ID, Task: id, Parent: sp.Parent, Attempt: sp.Attempt,
		Data: map[string]any{"children": kids}})
	a, err := j.NewAttempt(t, sp, "", "")
	if err != nil {
		return subagent.Finish(ctx, j, sp, agent.Result{Error: err.Error(), Summary: err.Error(), ExitCode: -1}, agent.NotStarted)
	}
	if pl, err := chain.PlanOf(j.Scope, sp); err == nil {
		a.Prompt = pl.Content // the leading commands ran in the first attempt
		if !agent.IsModel(a.Profile) {
			a.Script = pl.Content
		}
	}
	results := children.ResultsWith(l.Dir, kids, children.FollowUp(j.Config, t))
	session, _ := task.RecordOf(t).Result.String("sessionId")
	if agent.CanResume(a.Profile) && session != "" {
		a.Resume = session
		a.Prompt = results
	} else {
		// An exec agent runs its script again (a.script); the results are in
		// prompt.md and in $TASKD_RESULTS.
		a.Prompt = strings.TrimSpace(a.Prompt) + "\n\n" + results
	}
	a.Env = map[string]string{"TASKD_RESULTS": results}
	res, out := j.RunAgent(ctx, a)
	if a.Stopped != nil {
		// Never started (the daemon stops, its run folder could not be
		// written): it waits for its children's results again.
		return j.NotStarted(ctx, c, a, a.Stopped)
	}
	return afterAttempt(ctx, j, sp, res, out)
}

// wantsResume reports whether any of a parent's ended children was started
// by the parent's agent (/push, taskd push, a delegation), whose results it
// must be given in a new attempt. Parallel items, an auto plan and return
// chains are part of the task's own definition and need no new attempt.
func wantsResume(l *job.List, kids []string) bool {
	for _, k := range kids {
		c, err := l.Dir.Read(k)
		if err != nil {
			continue
		}
		m := c.Metadata.Object("taskd")
		item, _ := m.Bool("parallelItem")
		ret, _ := m.String("returnOf")
		if !item && ret == "" {
			return true
		}
	}
	return false
}
