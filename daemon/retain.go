package daemon

import (
	"context"
	"time"

	"github.com/taskd/taskd/daemon/control"
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
	tp := retention.TaskPolicy{Succeeded: d.cfg.Retention.SucceededTasks, Failed: d.cfg.Retention.FailedTasks}
	if p.MaxAge == 0 && tp == (retention.TaskPolicy{}) || !d.retaining.CompareAndSwap(false, true) {
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
			d.retainTasks(d.ctx, l, tp)
			if p.MaxAge > 0 {
				d.retainList(d.ctx, l, p)
			}
		}
	}()
}

// retainList applies p to list l: its run folders and inboxes, and the
// git worktrees of its tasks (worktrees.go); and removes the lock
// directories dead processes kept there.
func (d *Daemon) retainList(ctx context.Context, l *job.List, p retention.Policy) {
	now := d.clock.Now()
	d.retainWorktrees(l, p, now)
	rs, err := retention.Plan(l.Path(), p, now, retention.Tasks(l.Dir))
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

// retainTasks removes the files of list l's tasks that ended longer ago
// than p keeps them, with their run folders and inboxes, unless a task
// that has not ended needs them (retention.PlanTasks); each is checked
// again under its lock just before. The loop, seeing a file gone, removes
// its worktree (its branch stays).
func (d *Daemon) retainTasks(ctx context.Context, l *job.List, p retention.TaskPolicy) {
	now := d.clock.Now()
	rs, err := retention.PlanTasks(l.Dir, p, now)
	if err != nil {
		d.log.Warn("retention: look at the list's ended tasks", "list", l.ID, "err", err)
		return
	}
	removed := 0
	for _, r := range rs {
		if ctx.Err() != nil {
			return
		}
		if _, err := control.RemoveIf(ctx, l.Dir, r.ID, retention.StillExpired(l.Dir, p, now)); err != nil {
			d.log.Warn("retention: remove an ended task", "list", l.ID, "task", r.ID, "err", err)
			continue
		}
		removed++
	}
	if removed > 0 {
		d.log.Info("retention: removed ended tasks", "list", l.ID, "tasks", removed)
	}
}
