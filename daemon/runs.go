package daemon

import (
	"time"

	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/notify"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/daemon/worktree"
	"github.com/taskd/taskd/taskfile"
)

// What the loop keeps of tasks' agent runs (docs/agents.md): the profile
// a plain task's agent runs with, so that no task of a profile paused by
// a usage limit starts; the pauses paused tasks record, restored after a
// restart; a person notified when a task needs them or fails; and a
// task's git worktree, removed when the task is cleaned up.

// An observation is what the loop read of a task file, once: the file,
// what it asks for, the daemon's record of it, and the profile its owner
// field names.
type observation struct {
	tf    *taskfile.Task
	spec  task.Spec
	rec   task.Record
	owner string
}

// observeRuns records of task id, just observed (ob) in state e.state (it
// was in prevState), what the loop needs of its runs, and notifies a
// person of the change if the configuration asks for it, when the loop
// had observed the task before (e.seen: a change found at startup is not
// notified).
func (d *Daemon) observeRuns(l *list, id string, e *entry, ob observation, prevState task.State) {
	tf, sp, ownerProfile := ob.tf, ob.spec, ob.owner
	e.profile = ""
	if wf, _ := tf.Metadata.String("workflowType"); wf == "" {
		name, explicit := sp.Agent, true
		if name == "" {
			name = ownerProfile
		}
		if name == "" {
			explicit = false
		}
		if p, err := d.cfg.ResolveAgent(name, explicit); err == nil {
			e.profile = p.Name
		}
	}
	if ob.rec.State == task.Paused {
		if lim, ok := job.PauseIn(ob.rec); ok {
			d.pauses.Restore(lim.Profile, lim)
		}
	}
	e.workspace = worktree.Worktree{}
	if ws, ok := job.WorkspaceOf(tf); ok {
		if _, ours := job.WorktreeBase(d.cfg, l.Dir.Path(), l.ID, id, ws.Path); ours {
			e.workspace = ws
			if e.archived {
				d.removeWorktree(l.List, id, ws)
			}
		}
	}
	if e.seen && e.state != prevState && d.notifier.Wants(string(e.state)) {
		summary, cost := job.ResultIn(ob.rec)
		d.notifier.Send(notify.Notice{Root: d.cfg.Root, List: l.ID, ID: id, Subject: tf.Subject, State: string(e.state),
			Reason: reasonOf(tf, ob.rec), Summary: summary, CostUSD: cost, File: l.Dir.File(id)})
	}
}

// reasonOf is why task t, with record rec, needs a person (hitl.reason)
// or failed (error).
func reasonOf(t *taskfile.Task, rec task.Record) string {
	if r, _ := rec.Hold.String("reason"); r != "" && rec.State == task.NeedsHuman {
		return r
	}
	return rec.Error
}

// heldByPause reports whether task id (an entry e that could start)
// waits for its profile's pause to end, and remembers it to look at
// again then.
func (l *list) heldByPause(id string, e *entry, pauses *job.Pauses) bool {
	if e.profile == "" || pauses.Paused(e.profile, l.clock.Now()) == nil {
		return false
	}
	if l.pauseHeld == nil {
		l.pauseHeld = map[string]struct{}{}
	}
	l.pauseHeld[id] = struct{}{}
	return true
}

// wakePaused considers again the tasks held back by a pause that has
// ended.
func (d *Daemon) wakePaused(now time.Time) {
	for _, l := range d.lists {
		for id := range l.pauseHeld {
			if e := l.entries[id]; e == nil || d.pauses.Paused(e.profile, now) == nil {
				delete(l.pauseHeld, id)
				l.consider(id)
			}
		}
	}
}
