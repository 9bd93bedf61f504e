package plain

import (
	"context"
	"time"

	"github.com/taskd/taskd/daemon/job"
)

// A claimGate lets a claimed task's agent start once the job holds its
// slot and the file still holds the claim (marked running once the agent
// has started, if it was claimed ahead of the slot:
// job.StartMarkingLater); it logs the start and gives the slot back the
// moment the agent exits (unless the task's loop condition needs it next).
type claimGate struct {
	j        *job.Job
	claim    *job.Claim
	logStart func()
	release  bool
}

func (g *claimGate) Enter(ctx context.Context) error {
	if err := g.j.Slot.Acquire(ctx); err != nil {
		return err
	}
	return g.j.StartMarkingLater(ctx, g.claim)
}

func (g *claimGate) Started(time.Time) { g.logStart() }

func (g *claimGate) Exited() {
	if g.release {
		g.j.Slot.Release()
	}
}
