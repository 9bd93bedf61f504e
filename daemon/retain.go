package daemon

import (
	"context"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/retention"
	"github.com/taskd/taskd/taskfile"
)

// retainEvery is how often the daemon applies its retention policy (and
// once at start).
const retainEvery = time.Hour

// retain applies the retention policy (config.Retention) to every list
// served, in a goroutine of its own, unless the last pass is still under
// way. Called by the loop, it hands that goroutine what the loop knows of
// each list's tasks (known): the files of tasks known to have ended are
// not read again, but for the few that go, each read under its lock
// just before; nothing of a task that has not ended is touched (package
// retention).
func (d *Daemon) retain() {
	p := retention.Policy{MaxAge: d.cfg.Retention.MaxAge, KeepRuns: d.cfg.Retention.KeepRuns}
	tp := retention.TaskPolicy{Succeeded: d.cfg.Retention.SucceededTasks, Failed: d.cfg.Retention.FailedTasks}
	if p.MaxAge == 0 && tp == (retention.TaskPolicy{}) || !d.retaining.CompareAndSwap(false, true) {
		return
	}
	type served struct {
		*job.List
		tasks []retention.TaskInfo
	}
	var lists []served
	// Files changed from now on are read again before anything goes
	// (retention.ChangedSince).
	since := time.Now().Add(-snapshotLag)
	for _, id := range d.order {
		if l := d.lists[id]; l.refused == nil {
			lists = append(lists, served{l.List, l.known()})
		}
	}
	d.background.Add(1)
	go func() {
		defer d.background.Done()
		defer d.retaining.Store(false)
		start := time.Now()
		for i, l := range lists {
			if d.ctx.Err() != nil {
				return
			}
			d.retainTasks(d.ctx, l.List, tp, l.tasks, since)
			if p.MaxAge > 0 {
				d.retainList(d.ctx, l.List, p, l.tasks)
			}
			lists[i].tasks = nil // done with: its memory goes
		}
		// What the pass knew of every task, and planned from it, is
		// garbage now: give it back to the system, as the scan does,
		// since the daemon may idle for an hour.
		lists = nil
		debug.FreeOSMemory()
		d.log.Debug("retention: pass done", "took", time.Since(start).Round(time.Millisecond))
	}()
}

// snapshotLag is how much earlier than the loop's snapshot of what it
// knows (known) a file's change time may read for a change made after it:
// the kernel stamps files with a coarse clock, a tick behind. (A change
// made before the snapshot whose event the loop has not taken yet is
// missed, as a change between a read and a removal always was.)
const snapshotLag = 20 * time.Millisecond

// known is what the loop knows of l's tasks, by id, for retention: a
// file the loop has not read as it is now (refused, unparsable, changed
// since) is not known, and retention reads it.
func (l *list) known() []retention.TaskInfo {
	out := make([]retention.TaskInfo, 0, len(l.entries))
	for id, e := range l.entries {
		k := retention.TaskInfo{ID: id}
		_, dirty := l.dirty[id]
		_, recheck := l.recheck[id]
		if e.hash != 0 && e.reject == "" && e.badReason == "" && !dirty && !recheck {
			k.Known, k.Owned, k.Parent = true, e.owned, e.parent
			if e.branchOf != "" {
				k.Parent = e.branchOf
			}
			if e.owned {
				k.Ended, k.State, k.Schedule, k.EndedAt = e.state.Ended() && !e.cancel, e.state, e.recur != nil, e.finishedAt
			} else {
				k.Ended = e.status == taskfile.StatusCompleted
			}
		}
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b retention.TaskInfo) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// retainList applies p to list l: its run folders and inboxes, and the
// git worktrees of its tasks (worktrees.go), as tasks says its tasks are,
// each removal's task asked again just before; and removes the lock
// directories dead processes kept there.
func (d *Daemon) retainList(ctx context.Context, l *job.List, p retention.Policy, tasks []retention.TaskInfo) {
	now := d.clock.Now()
	d.retainWorktrees(l, p, now, tasks)
	rs, err := retention.Plan(l.Path(), p, now, retention.Known(l.Dir, tasks))
	if err != nil {
		d.log.Warn("retention: look at the list's runs and inboxes", "list", l.ID, "err", err)
	}
	rs = retention.Confirm(rs, retention.Tasks(l.Dir))
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
// that has not ended needs them (retention.PlanSince, from tasks, what
// the loop knew at since, and the files changed after); each is checked
// again under its lock just before. The loop, seeing a file gone,
// removes its worktree (its branch stays).
func (d *Daemon) retainTasks(ctx context.Context, l *job.List, p retention.TaskPolicy, tasks []retention.TaskInfo, since time.Time) {
	now := d.clock.Now()
	rs, err := retention.PlanSince(l.Dir, p, now, tasks, since)
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
