package job

import (
	"context"

	"github.com/taskd/taskd/daemon/agent"
)

// A Reattacher is a Runner whose attempts may outlive the daemon, because
// they run elsewhere (package remote's, on workers). While the daemon
// stops, such an attempt is left running: its Result.Outcome is Detached
// and Finish records nothing. After a restart, recovery asks the runner
// what became of an attempt its task was left running with before taking
// it for interrupted.
type Reattacher interface {
	// Reattach waits for the attempt whose run folder is runDir, inside
	// the list directory listDir, to end, fills its run folder as Run
	// does, and returns how it ended with ok set. ok is false when the
	// attempt is not one the runner sent elsewhere: recovery then goes on
	// as for an agent of this machine. onFollow, if not nil, is called
	// once the runner has found the attempt and follows it, before it
	// waits.
	Reattach(ctx context.Context, listDir, runDir string, onFollow func()) (res agent.Result, out agent.Outcome, ok bool)
}

// Detached is the Result.Outcome of an attempt that goes on elsewhere while
// the daemon stops: Finish writes nothing, and the next start reattaches.
const Detached = "detached"

// Reattach asks the job's runner what became of the attempt whose run
// folder is runDir (see Reattacher); ok is false if the runner has no
// attempts elsewhere or this was not one of them. onFollow, if not nil,
// is called once the attempt is followed, before the wait.
func (j *Job) Reattach(ctx context.Context, runDir string, onFollow func()) (agent.Result, agent.Outcome, bool) {
	r, isRemote := j.Runner.(Reattacher)
	if !isRemote {
		return agent.Result{}, agent.Finished, false
	}
	return r.Reattach(ctx, j.List.Path(), runDir, onFollow)
}
