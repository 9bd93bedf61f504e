package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/taskd/taskd/daemon/admit"
	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/pausefile"
)

// The pauses a person sets (taskd pause) and those of budgets per window,
// kept in the root's pause file beside the usage limits' (package
// pausefile): when the file changes, the admission takes them up; a task
// prepared ahead of its slot in what is now paused gives its claim back;
// a pause with stop interrupts the agents running in what it pauses, once,
// and their tasks run again when it is lifted. A lifted pause lets the
// tasks it held start at once.

// errPausedStop interrupts an agent in what taskd pause --stop paused:
// recorded as interrupted, its task runs again once resumed.
var errPausedStop = fmt.Errorf("%w: taskd pause --stop", agent.ErrInterrupted)

// syncHolds reads the pause file's pauses of persons and budgets into the
// admission and acts on what changed.
func (d *Daemon) syncHolds(now time.Time) {
	rec, err := pausefile.Read(d.cfg.Root)
	if err != nil {
		return // said by syncPauses, which read it first
	}
	d.admit.SetPauses(rec, now)
	holds := rec.Holds()
	for s, p := range holds {
		if old, ok := d.holdsSeen[s]; !ok || !old.Since.Equal(p.Since) {
			d.log.Info("paused", "what", s.String(), "by", p.By, "until", p.Until, "stop", p.Stop)
		}
	}
	for s := range d.holdsSeen {
		if _, ok := holds[s]; !ok {
			d.log.Info("resumed", "what", s.String())
		}
	}
	d.holdsSeen = holds
	for _, l := range d.lists {
		for id := range l.admitHeld {
			l.consider(id) // a pause lifted, or another reason now
		}
		for id, e := range l.entries {
			if e.job == nil {
				continue
			}
			s, p, held := rec.Hold(l.ID, e.profile, now)
			if !held {
				continue
			}
			if w := l.prepared[id]; w == e.job && d.slots.Bump(w.slot.ticket) {
				w.bumped = true // its claim is given back; it waits for the resume
			}
			if p.Stop && d.stoppedFor[s].Before(p.Since) && stoppable(e.job.Kind) && !d.slots.Queuing(e.job.slot.ticket) {
				e.job.stop(errPausedStop)
			}
		}
	}
	for s, p := range holds {
		if p.Stop {
			d.stoppedFor[s] = p.Since
		}
	}
}

// stoppable reports whether pause --stop interrupts a job of kind: one
// that runs agents, not the loop's bookkeeping.
func stoppable(k job.Kind) bool {
	return k == job.Run || k == job.Resume || k == job.Answer
}

// pauseBudgets records in the pause file that budgets per window are
// spent: each pauses its list or profile until its next window, unless
// something pauses it already.
func (d *Daemon) pauseBudgets(spent []admit.Spent) {
	now := d.clock.Now()
	ctx, cancel := context.WithTimeout(d.ctx, 10*time.Second)
	defer cancel()
	err := pausefile.Update(ctx, d.cfg.Root, now, func(r *pausefile.Record) error {
		for _, sp := range spent {
			if _, ok := r.Get(sp.Scope); ok {
				continue
			}
			p := pausefile.Pause{By: pausefile.ByBudget, Since: now, Until: sp.Until,
				Reason: fmt.Sprintf("its budget per window, $%.2f, is spent ($%.2f) until %s", sp.Budget, sp.Spent, sp.Until.Local().Format("Jan 2 15:04"))}
			if sp.Scope.Kind == pausefile.Profile {
				p.Agents, p.Default = d.cfg.AgentsOf(sp.Scope.Name)
			}
			r.Set(sp.Scope, p)
		}
		return nil
	})
	if err != nil {
		d.log.Warn("record a spent budget in the pause file", "err", err)
	}
	d.pausesChanged = true
}
