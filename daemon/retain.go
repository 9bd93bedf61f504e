package daemon

import (
	"context"
	"time"

	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/retention"
)

// retainEvery is how often the daemon applies its retention policy (and
// once at start).
const retainEvery = time.Hour

// retain applies the retention policy (config.Retention) to every list
// served, in a goroutine of its own, unless the last pass is still under
// way. It reads the task files as they are when it looks; nothing of a
// task that has not ended is touched (package retention). Called by the
// loop.
func (d *Daemon) retain() {
	p := retention.Policy{MaxAge: d.cfg.Retention.MaxAge, KeepRuns: d.cfg.Retention.KeepRuns}
	if p.MaxAge == 0 || !d.retaining.CompareAndSwap(false, true) {
		return
	}
	var lists []*job.List
	for _, id := range d.order {
		if l := d.lists[id]; l.refused == nil {
			lists = append(lists, l.List)
		}
	}
	d.background.Add(1)
	go func() {
		defer d.background.Done()
		defer d.retaining.Store(false)
		for _, l := range lists {
			if d.ctx.Err() != nil {
				return
			}
			d.retainList(d.ctx, l, p)
		}
	}()
}

// retainList applies p to list l: its run folders and inboxes, and the
// git worktrees of its tasks (worktrees.go); and removes the lock
// directories dead processes kept there.
func (d *Daemon) retainList(ctx context.Context, l *job.List, p retention.Policy) {
	d.retainWorktrees(l, p, time.Now())
	rs, err := retention.Plan(l.Path(), p, time.Now(), retention.Tasks(l.Dir))
	if err != nil {
		d.log.Warn("retention: look at the list's runs and inboxes", "list", l.ID, "err", err)
	}
	locks, err := retention.PlanLocks(l.Path())
	if err != nil {
		d.log.Warn("retention: look at the list's kept lock directories", "list", l.ID, "err", err)
	}
	if len(rs)+len(locks) == 0 || ctx.Err() != nil {
		return
	}
	n, err := retention.Apply(l.Path(), append(rs, locks...))
	if err != nil {
		d.log.Warn("retention: remove", "list", l.ID, "err", err)
	}
	if len(rs) > 0 {
		d.log.Info("retention: removed what ended tasks left", "list", l.ID, "paths", len(rs), "bytes", n)
	}
}
