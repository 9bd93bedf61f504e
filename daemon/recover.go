package daemon

import (
	"context"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/flow"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// recoverTask handles a task whose file says running while no job of this
// daemon runs it: the previous daemon died (SIGKILL, power loss) during an
// attempt. If the attempt's agent had already exited, its result.json is in
// the run folder and is recorded as if the daemon had seen the exit: the
// work is not done twice. Otherwise the agent's process group, if it is
// still alive, is killed, the attempt is recorded as interrupted
// (TaskInterrupted) and the task becomes runnable again.
func (d *Daemon) recoverTask(ctx context.Context, j *job.Job) (*taskfile.Task, error) {
	t, err := j.List.Dir.Read(j.ID)
	if err != nil {
		return nil, err
	}
	sp, err := task.ReadSpec(t)
	if err != nil || sp.State != task.Running {
		return nil, errNotRunnable
	}
	if wf, _ := t.Metadata.String("workflowType"); wf != "" {
		return flow.Recover(ctx, j, t, sp)
	}
	return d.recoverRun(ctx, j, sp)
}

// recoverRun records how attempt sp.Attempt of a plain task ended while no
// daemon watched it: with its result.json if the agent had exited, else as
// interrupted, its leftover process group killed.
func (d *Daemon) recoverRun(ctx context.Context, j *job.Job, sp task.Spec) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	runDir := l.RunDir(id, sp.Attempt)
	if res, ok := agent.ReadResult(runDir); ok {
		d.log.Info("recording the result of an attempt that ended while the daemon was down", "list", l.ID, "task", id, "attempt", sp.Attempt)
		return d.afterAttempt(ctx, j, sp, res, agent.OutcomeOf(res))
	}
	if agent.KillLeftover(runDir) {
		d.log.Info("killed the agent of an interrupted attempt", "list", l.ID, "task", id, "attempt", sp.Attempt)
	}
	res := agent.Result{Error: "interrupted: the daemon stopped while the agent ran", ExitCode: -1}
	res.Summary = res.Error
	return subagent.Finish(ctx, j, sp, res, agent.Interrupted)
}
