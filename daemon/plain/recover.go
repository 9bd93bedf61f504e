package plain

import (
	"context"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Recover records how attempt sp.Attempt of a plain task ended while no
// daemon watched it, once what its agent left running is killed: with its
// result.json if the agent had exited, else as interrupted (its session
// kept, for the next attempt to resume).
func Recover(ctx context.Context, j *job.Job, sp task.Spec) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	runDir := l.RunDir(id, sp.Attempt)
	// What the attempt's agent left running goes first, whether or not
	// the agent itself had ended; what shows that it went on to start
	// its agent is looked at before (its cgroup goes with the kill).
	entered := agent.Entered(runDir)
	killed := agent.KillLeftover(runDir)
	if killed {
		j.Log.Info("killed what the agent of an interrupted attempt left running", "list", l.ID, "task", id, "attempt", sp.Attempt)
	}
	if sp.State == task.Starting && !killed && !entered && !agent.StartedIn(runDir) {
		// Claimed ahead of its slot, its agent never started.
		return j.Unprepare(ctx, sp)
	}
	if res, ok := agent.ReadResult(runDir); ok {
		j.Log.Info("recording the result of an attempt that ended while the daemon was down", "list", l.ID, "task", id, "attempt", sp.Attempt)
		return afterAttempt(ctx, j, sp, res, agent.OutcomeOf(res))
	}
	// An attempt a worker runs, or ran. A task left starting (its
	// running mark not written before the restart) is marked running
	// once its attempt is followed: its agent runs.
	var onFollow func()
	if sp.State == task.Starting {
		onFollow = func() { j.MarkFollowed(ctx, sp) }
	}
	if res, out, ok := j.Reattach(ctx, runDir, onFollow); ok {
		return afterAttempt(ctx, j, sp, res, out)
	}
	res := agent.Result{Error: "interrupted: the daemon stopped while the agent ran", ExitCode: -1}
	res.Summary = res.Error
	return subagent.Finish(ctx, j, sp, res, agent.Interrupted)
}
