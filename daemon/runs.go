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

// observeRuns records of task id, just observed in state e.state (it was
// in prevState), what the loop needs of its runs, and notifies a person
// of the change if the configuration asks for it. seen says the loop had
// observed the task before (a change found at startup is not notified).
func (d *Daemon) observeRuns(l *list, id string, e *entry, tf *taskfile.Task, sp task.Spec, ownerProfile string, prevState task.State, seen bool) {
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
	if sp.State == task.Paused {
		if lim, ok := job.PauseOf(tf); ok {
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
	if seen && e.state != prevState && d.notifier.Wants(string(e.state)) {
		summary, cost := job.ResultOf(tf)
		d.notifier.Send(notify.Notice{Root: d.cfg.Root, List: l.ID, ID: id, Subject: tf.Subject, State: string(e.state),
			Reason: reasonOf(tf), Summary: summary, CostUSD: cost, File: l.Dir.File(id)})
	}
}

// reasonOf is why a task needs a person (hitl.reason) or failed (error).
func reasonOf(t *taskfile.Task) string {
	m := t.Metadata.Object("taskd")
	if r, _ := m.Object("hitl").String("reason"); r != "" && task.Of(t) == task.NeedsHuman {
		return r
	}
	s, _ := m.String("error")
	return s
}

// heldByPause reports whether task id (an entry e that could start)
// waits for its profile's pause to end, and remembers it to look at
// again then.
func (l *list) heldByPause(id string, e *entry, pauses *job.Pauses) bool {
	if e.profile == "" || pauses.Paused(e.profile, time.Now()) == nil {
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
