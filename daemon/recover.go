package daemon

import (
	"context"

	"github.com/taskd/taskd/daemon/flow"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/plain"
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
	return plain.Recover(ctx, j, sp)
}
