package flow

import (
	"context"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Recover handles a workflow task a dead daemon left running. If the
// step that was running had finished (its result.json exists and the step
// trace does not have it yet), its result is applied, once it has the
// verdict the step needs (judge); otherwise the step's leftover processes
// are killed and the task runs the step again.
func Recover(ctx context.Context, j *job.Job, t *taskfile.Task, sp task.Spec) (*taskfile.Task, error) {
	l := j.List
	n := lastRunDir(l, t.ID)
	applied := task.RecordOf(t).Attempt
	if n > 0 {
		agent.KillLeftover(l.RunDir(t.ID, n)) // what the last step's agent left running
	}
	if sp.State == task.Starting && n <= applied {
		return j.Unprepare(ctx, sp) // claimed ahead of its slot, no step ran
	}
	if n > applied {
		runDir := l.RunDir(t.ID, n)
		res, ok := agent.ReadResult(runDir)
		if !ok {
			var out agent.Outcome
			if res, out, ok = j.Reattach(ctx, runDir, nil); ok && out == agent.Interrupted {
				sp.Attempt = n
				return j.Finish(ctx, sp, res, out, nil) // the step a worker ran was lost
			}
		}
		if ok {
			switch out := agent.OutcomeOf(res); out {
			case agent.Cancelled, agent.NotStarted:
				sp.Attempt = n
				return j.Finish(ctx, sp, res, out, nil)
			}
			j.Log.Info("applying the result of a step that ended while the daemon was down", "list", l.ID, "task", t.ID, "attempt", n)
			f := newFlow(j, t, sp)
			f.run = n
			resp, err := f.current(ctx)
			if err != nil {
				return nil, err
			}
			end := f.judge(ctx, resp, nil, res) // its verdict, asked for again if it had none
			result := resultOf(end)
			if result == "" {
				return f.ended(ctx, resp.CurrentStep, end)
			}
			return f.loop(ctx, result, afterNothing)
		}
		sp.Attempt = n
	}
	res := agent.Result{Error: "interrupted: the daemon stopped while the step ran", ExitCode: -1}
	res.Summary = res.Error
	return j.Finish(ctx, sp, res, agent.Interrupted, nil)
}
