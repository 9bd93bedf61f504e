package daemon

import (
	"cmp"
	"slices"
	"time"

	"github.com/taskd/taskd/daemon/slots"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// The order of a list's ready queue and the times tasks wait for
// (docs/scheduling.md): the task of the highest priority starts first,
// ties in id order; a task of higher priority than one prepared ahead of
// its slot takes that one's place; a task that waits for a time (its
// notBefore, a schedule's next time, a window's opening) is looked at
// again when it comes, on the loop's one timer.

// A readyTask is a task in a list's ready queue, with the priority it was
// queued with.
type readyTask struct {
	id       string
	priority int
	// e is its entry, l.entries[id] as long as it is queued: an entry is
	// made only for an id that has none, and its task leaves the queue
	// when it is dropped (forget), so the loop's look down the queue
	// reads each task's kind and profile without a lookup by id.
	e *entry
}

// compareReady orders the ready queue.
func compareReady(a, b readyTask) int {
	if c := cmp.Compare(b.priority, a.priority); c != 0 {
		return c
	}
	return taskfile.CompareIDs(a.id, b.id)
}

// enqueue puts task id, an entry e that may start, in the ready queue in
// its place, unless it is there.
func (l *list) enqueue(id string, e *entry) {
	if l.inReady[id] {
		return
	}
	l.inReady[id] = true
	rt := readyTask{id: id, priority: e.priority, e: e}
	i, _ := slices.BinarySearchFunc(l.ready, rt, compareReady)
	l.ready = slices.Insert(l.ready, i, rt)
}

// unready takes task id out of the ready queue, if it is there.
func (l *list) unready(id string) {
	if !l.inReady[id] {
		return
	}
	delete(l.inReady, id)
	l.ready = slices.DeleteFunc(l.ready, func(rt readyTask) bool { return rt.id == id })
}

// tagOf is the slot pool's tag of ready task rt (entry e, if known).
func (l *list) tagOf(rt readyTask, e *entry) slots.Tag {
	tag := slots.Tag{Priority: rt.priority}
	if e != nil {
		tag.Profile = e.profile
	}
	return tag
}

// preparedJobs returns l's jobs that took a queued ticket.
func (l *list) preparedJobs() map[string]*work {
	if l.prepared == nil {
		l.prepared = map[string]*work{}
	}
	return l.prepared
}

// bump makes room for ready task rt, the first of list l's queue, if a
// job of l waits in the slots' queue for a task of lower priority: that
// one's ticket is taken out of the queue (its agent does not start, its
// claim is taken back, and it queues again as its file says), the lowest
// priority first, of equal ones the last in id order. A bump under way
// (its job not ended yet) is enough: bump does nothing more. It reports
// whether it bumped a job.
func (d *Daemon) bump(l *list, rt readyTask) bool {
	var worst *work
	for _, w := range l.prepared {
		if w.bumped {
			return false
		}
		if w.priority >= rt.priority || !d.slots.Queuing(w.slot.ticket) {
			continue
		}
		if worst == nil || compareReady(readyTask{id: w.ID, priority: w.priority}, readyTask{id: worst.ID, priority: worst.priority}) > 0 {
			worst = w
		}
	}
	if worst == nil || !d.slots.Bump(worst.slot.ticket) {
		return false
	}
	worst.bumped = true
	d.log.Debug("a task of higher priority takes the place of one prepared", "list", l.ID, "task", rt.id, "priority", rt.priority, "instead of", worst.ID)
	return true
}

// bumpedFloor returns the highest priority of l's tasks whose jobs were
// bumped and have not ended: until they have, and their tasks are back
// in the queue, no task of a lower priority is started in their place.
func (l *list) bumpedFloor() (bool, int) {
	found, floor := false, 0
	for _, w := range l.prepared {
		if w.bumped && (!found || w.priority > floor) {
			found, floor = true, w.priority
		}
	}
	return found, floor
}

// waitUntil records that task id waits until at: the loop considers it
// again then.
func (l *list) waitUntil(id string, at time.Time) {
	if l.dueAt == nil {
		l.dueAt = map[string]time.Time{}
	}
	l.dueAt[id] = at
	if l.nextDue.IsZero() || at.Before(l.nextDue) {
		l.nextDue = at
	}
}

// clockBack considers again every task that waits for a time when the
// clock reads earlier than the loop last saw (a system clock set back): a
// schedule's next time computed before is then too far away (the
// schedule computes it again, recur.Decide), and the wake-up the loop set
// for it came from the clock as it was.
func (d *Daemon) clockBack() {
	now, was := d.clock.Now().Round(0), d.lastNow // the wall clock, not the monotonic one
	d.lastNow = now
	if !now.Before(was) {
		return
	}
	d.log.Info("the clock was set back; the times tasks wait for are considered again", "now", now, "was", was)
	for _, l := range d.lists {
		for id := range l.dueAt {
			l.consider(id)
		}
		clear(l.dueAt)
		l.nextDue = time.Time{}
	}
}

// wakeTimed considers again the tasks of l whose time has come (waitUntil).
func (l *list) wakeTimed(now time.Time) {
	if l.nextDue.IsZero() || now.Before(l.nextDue) {
		return
	}
	l.nextDue = time.Time{}
	for id, at := range l.dueAt {
		if !now.Before(at) {
			delete(l.dueAt, id)
			l.consider(id)
		} else if l.nextDue.IsZero() || at.Before(l.nextDue) {
			l.nextDue = at
		}
	}
}

// waitsForTime reports whether e is a task whose next attempt is one
// its notBefore applies to: it has not started, or waits to start again.
func (e *entry) waitsForTime() bool {
	switch e.state {
	case task.None, task.Retrying, task.Paused:
		return !e.notBefore.IsZero() && e.status == taskfile.StatusPending
	}
	return false
}
