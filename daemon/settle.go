package daemon

import (
	"os"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/slots"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// The loop's part of trust (docs/architecture.md): a task the loop ends
// without running it. A person's completed stands; a cancel reaches a
// task's whole subtree; a task whose blocker failed for good fails; a
// queued child whose parent ended without starting it is cancelled. Each
// is decided here from what the loop remembers and done by a job, which
// reads the files again under the lock.

// settle starts the job that ends task id without running it, if the task
// asks for one, and reports whether it did. Loop goroutine only.
func (d *Daemon) settle(l *list, id string, e *entry) bool {
	switch {
	case e.status == taskfile.StatusCompleted && job.UserCompletable(e.state):
		// Completed by a person (or Claude Code) while taskd had it:
		// recorded, never run again.
		return d.startJob(l, id, job.Settle, slots.Late)
	case e.state.Ended() || e.status == taskfile.StatusCompleted || e.state.Claimed():
		// A task left running by a dead daemon is recovered first.
		return false
	case e.cancel || l.cancelledAbove(id, e) || l.orphaned(e):
		return d.startJob(l, id, job.Cancel, slots.Late)
	case (e.state == task.None || e.state == task.Retrying) && e.status == taskfile.StatusPending && !e.waitOnFailure && l.blockerFailed(e):
		return d.startJob(l, id, job.Settle, slots.Late)
	}
	return false
}

// cancelledAbove reports whether a task above task id (its parent, the
// parent's parent, …) is cancelled or being cancelled.
func (l *list) cancelledAbove(id string, e *entry) bool {
	seen := map[string]bool{id: true}
	for p := e.parent; p != "" && !seen[p] && len(seen) < maxTreeDepth; {
		seen[p] = true
		pe := l.entries[p]
		if pe == nil || pe.reject != "" || !pe.owned {
			return false
		}
		if pe.state == task.Cancelled || pe.cancel && !pe.state.Ended() {
			return true
		}
		p = pe.parent
	}
	return false
}

// orphaned reports whether a queued child's parent ended (or is gone)
// without starting it.
func (l *list) orphaned(e *entry) bool {
	if e.state != task.Queued || e.parent == "" {
		return false
	}
	pe := l.entries[e.parent]
	if pe == nil {
		_, err := os.Lstat(l.Dir.File(e.parent))
		return os.IsNotExist(err)
	}
	return pe.owned && pe.reject == "" && pe.state.Ended()
}

// blockerFailed reports whether a task e is blocked by failed for good or
// was cancelled (and no person completed it).
func (l *list) blockerFailed(e *entry) bool {
	for _, b := range e.blockedBy {
		if be := l.entries[b]; be != nil && be.owned && be.reject == "" && be.status != taskfile.StatusCompleted && job.BlockerFailed(be.state) {
			return true
		}
	}
	return false
}

// maxTreeDepth bounds the walks up a tree of tasks.
const maxTreeDepth = 64

// setParent records that task id's parent is parent, for the walks down
// the tree (a cancel, an ended parent).
func (l *list) setParent(id, old, parent string) {
	if old == parent {
		return
	}
	if k := l.kids[old]; k != nil {
		delete(k, id)
		if len(k) == 0 {
			delete(l.kids, old)
		}
	}
	if parent != "" {
		if l.kids[parent] == nil {
			l.kids[parent] = map[string]struct{}{}
		}
		l.kids[parent][id] = struct{}{}
	}
}

// considerKids marks the tasks whose parent is id for evaluation: id was
// cancelled, or ended.
func (l *list) considerKids(id string) {
	for k := range l.kids[id] {
		l.consider(k)
	}
}

// settleMissed holds a settling job's task back for a while after the job
// found nothing to do (the loop's memory and the files disagreed for a
// moment): the loop asks again later, never in a spin.
func (e *entry) settleMissed(kind job.Kind, missed bool) {
	if kind != job.Settle && kind != job.Cancel {
		return
	}
	if !missed {
		e.settleMisses = 0
		return
	}
	e.settleMisses++
	e.holdUntil = time.Now().Add(min(100*time.Millisecond<<min(e.settleMisses-1, 9), time.Minute))
}

// lockOf returns the id of the task whose lock (<id>.json.lock) name is.
func lockOf(name string) (string, bool) {
	if n, ok := strings.CutSuffix(name, ".lock"); ok {
		return taskID(n)
	}
	return "", false
}

// lockChanged handles a change of task id's lock: a task held because its
// lock could not be taken is tried again at once, not at the end of its
// backoff.
func (l *list) lockChanged(id string) {
	if e := l.entries[id]; e != nil && e.jobErrors > 0 && e.job == nil {
		e.holdUntil = time.Time{}
		l.consider(id)
	}
}
