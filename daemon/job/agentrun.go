package job

import (
	"context"
	"time"

	"github.com/taskd/taskd/daemon/agent"
)

// A job runs its agents itself: it is their gate (agent.Gate), so an
// agent waits for the job's slot, and it hands each attempt to the
// runner with the job's pauses and progress around it.

// Enter implements agent.Gate: an agent of the job waits for its slot.
func (j *Job) Enter(ctx context.Context) error { return j.Slot.Acquire(ctx) }

// Started implements agent.Gate.
func (j *Job) Started(time.Time) {}

// Exited implements agent.Gate: the job keeps its slot until it ends.
func (j *Job) Exited() {}

// RunAgent runs attempt a with the job's runner; its agent waits for the
// job's slot unless a has a gate of its own (runAgent).
func (j *Job) RunAgent(ctx context.Context, a *agent.Attempt) (agent.Result, agent.Outcome) {
	return j.runAgent(ctx, a)
}

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
	a.Gate = pauseGate{Gate: a.Gate, pauses: j.Pauses, profile: a.Profile.Name, now: j.Now}
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
			res.Limit = j.Pauses.Paused(a.Profile.Name, j.Now())
		}
	}
	return res, out
}
