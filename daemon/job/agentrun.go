package job

import (
	"context"
	"time"

	"github.com/taskd/taskd/daemon/agent"
)

// runAgent runs attempt a with the job's runner: its agent starts only
// while its profile is not paused by a usage limit, and its progress is
// written into the task file while it runs (progressWriter), the last
// write done before runAgent returns, so before its end is recorded. An
// attempt that ends without a limit starts its profile's backoff over;
// one kept from starting by a pause carries the pause's limit.
func (j *Job) runAgent(ctx context.Context, a *agent.Attempt) (agent.Result, agent.Outcome) {
	if a.Gate == nil {
		a.Gate = j
	}
	a.Gate = pauseGate{Gate: a.Gate, pauses: j.Pauses, profile: a.Profile.Name}
	var w *progressWriter
	if a.Report == nil && agent.IsStream(a.Profile.Output) {
		w = &progressWriter{j: j}
		a.Report = w
	}
	j.agents.Add(1) // its slot is not given up while a write waits for a lock
	res, out := j.Runner.Run(ctx, a)
	j.agents.Add(-1)
	if w != nil {
		w.close()
	}
	switch out {
	case agent.Finished:
		j.Pauses.Clear(a.Profile.Name)
	case agent.Paused:
		if res.Limit == nil {
			res.Limit = j.Pauses.Paused(a.Profile.Name, time.Now())
		}
	}
	return res, out
}
