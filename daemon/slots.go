package daemon

import (
	"context"
	"runtime"
	"slices"
)

// Concurrency slots change hands without the loop. The loop decides which
// tasks start (schedule) and takes a job's counts back when it ends
// (finished), but a slot given back by an agent that exited goes straight
// to the first job waiting for one, in the exiting job's goroutine: a
// round trip through the loop, which may be busy reading the files of a
// burst of events, would leave the slot idle for as long. The loop is
// kicked too, so that it prepares the next job ahead of the next free
// slot.
//
// Every count and queue here is guarded by Daemon.slotMu, which is held
// only while counting, never across I/O.

// prep says how a job that needs a slot gets it.
type prep int

const (
	// prepLate starts without a slot and takes one (in turn with the
	// queued jobs) only when it is about to start an agent, which few of
	// its kind do: recovering a task a dead daemon left running may
	// apply a step's result and go on to the workflow's next step, say.
	// It keeps the slot until the job ends.
	prepLate    prep = iota
	prepClaimed      // prepared ahead of a slot, its claim written first
	// prepWait takes a free slot when it starts, or else waits in the
	// queue for one, in turn with the prepared jobs, before it does
	// anything: a freed slot goes straight to a queued job, so a job that
	// only took free slots would wait until no other list had any.
	prepWait
)

// preparedPerSlot is how many jobs per slot may wait in the queue for a
// free slot. Of these at most one per slot may be a claimed task (prepClaimed),
// its claim written and its run folder made, whose file says in_progress
// while it waits; the others are jobs that prepare nothing (prepWait): a
// parent to resume, an answer to apply. With a claimed job waiting, a slot
// freed by a short agent is handed over without waiting for the next
// task's claim to be written.
const preparedPerSlot = 2

// hasRoom reports whether the limits leave room for a new job of list l
// that gets its slot as p says.
func (d *Daemon) hasRoom(l *list, p prep) bool {
	d.slotMu.Lock()
	defer d.slotMu.Unlock()
	return d.roomLocked(l, p)
}

func (d *Daemon) roomLocked(l *list, p prep) bool {
	switch p {
	case prepLate:
		return true // it takes no room until it asks for a slot
	case prepWait:
		return d.slotFree(l) || d.queueRoom(l)
	case prepClaimed:
		return d.pendingClaimed < d.cfg.Concurrency && l.slots.pendingClaimed < d.listLimit(l.id) && d.queueRoom(l)
	}
	return d.queueRoom(l)
}

// slotFree reports whether the limits leave a slot free for a job of list
// l. The caller holds d.slotMu.
func (d *Daemon) slotFree(l *list) bool {
	return d.running < d.cfg.Concurrency && l.slots.running < d.listLimit(l.id)
}

// queueRoom reports whether another job of list l may wait in the queue
// (preparedPerSlot per slot). The caller holds d.slotMu.
func (d *Daemon) queueRoom(l *list) bool {
	return d.pending < preparedPerSlot*d.cfg.Concurrency && l.slots.pending < preparedPerSlot*d.listLimit(l.id)
}

// takeRoom counts job j, about to start, as prepared ahead of a slot (and
// queues it for one, in the order jobs start) or as holding one, if the
// limits leave room for it, and reports whether they did.
func (d *Daemon) takeRoom(j *job) bool {
	d.slotMu.Lock()
	defer d.slotMu.Unlock()
	if !d.roomLocked(j.l, j.prep) {
		return false
	}
	if j.prep == prepLate {
		return true
	}
	if j.prep == prepWait && d.slotFree(j.l) {
		j.slot = true
		j.l.slots.running++
		d.running++
		close(j.granted) // its acquire returns at once
		return true
	}
	if j.prep == prepWait {
		j.asked = true // nothing to prepare
	}
	j.pending = true
	j.l.slots.pending++
	d.pending++
	if j.prep == prepClaimed {
		j.l.slots.pendingClaimed++
		d.pendingClaimed++
	}
	d.queue = append(d.queue, j)
	return true
}

// queueLate queues job j, which holds no slot and is about to start an
// agent, for one, behind the jobs queued already. It is not counted as
// prepared ahead of a slot: jobs that only wait for their turn must not
// keep other lists from preparing theirs. The caller holds d.slotMu.
func (d *Daemon) queueLate(j *job) {
	j.pending, j.asked, j.late = true, true, true
	j.granted = make(chan struct{})
	j.l.slots.late++
	d.queue = append(d.queue, j)
}

// unqueue takes job j, prepared ahead of a slot, out of the queue and the
// counts, if it is still there. The caller holds d.slotMu.
func (d *Daemon) unqueue(j *job) {
	if !j.pending {
		return
	}
	j.pending = false
	switch {
	case j.late:
		j.late = false
		j.l.slots.late--
	case j.prep == prepClaimed:
		j.l.slots.pendingClaimed--
		d.pendingClaimed--
		fallthrough
	default:
		j.l.slots.pending--
		d.pending--
	}
	d.queue = slices.DeleteFunc(d.queue, func(q *job) bool { return q == j })
}

// roomToFinish reports whether fewer jobs than the bound are recording
// their ends (finishingPerSlot), so that new jobs may start.
func (d *Daemon) roomToFinish() bool {
	d.slotMu.Lock()
	defer d.slotMu.Unlock()
	return d.finishing < finishingPerSlot*d.cfg.Concurrency
}

// acquireSlot waits until job j holds a concurrency slot, or ctx ends. A job
// that holds its slot returns at once; one that holds none and is not
// queued for one queues now (queueLate). A job stopped while
// it waits leaves the queue, and a slot granted to it meanwhile goes to the
// next job waiting; so does the slot of a job stopped after it was granted
// one, which returns ctx's cause as well (or errInterrupted, the daemon
// stopping, before ctx has learnt of it: stopCause).
func (d *Daemon) acquireSlot(ctx context.Context, j *job) error {
	d.slotMu.Lock()
	if !j.slot && !j.pending {
		// A job that started without a slot (prepLate), or that gave its
		// slot back when its agent exited and starts another agent,
		// queues for one now, unless it was stopped already.
		if err := d.stopCause(ctx); err != nil {
			d.slotMu.Unlock()
			return err
		}
		d.queueLate(j)
	}
	if j.pending {
		j.asked = true
		d.grant()
	}
	d.slotMu.Unlock()
	select {
	case <-j.granted:
	case <-ctx.Done():
	}
	if err := d.stopCause(ctx); err != nil {
		d.slotMu.Lock()
		d.unqueue(j)
		if d.dropSlot(j) {
			d.grant()
		}
		d.slotMu.Unlock()
		d.kickLoop()
		return err
	}
	d.kickLoop() // one job fewer waits ahead of a slot: prepare another
	return nil
}

// stopCause is why a job with context ctx must not start its agent: ctx's
// cause, or the daemon's stop. The daemon's context learns of a stop
// before any job's does, and the jobs learn of it one after another: a
// job whose agent was stopped first may give its slot to a job not yet
// told, which would start its agent in the middle of the stop.
func (d *Daemon) stopCause(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	if d.ctx != nil {
		return context.Cause(d.ctx)
	}
	return nil
}

// releaseSlot gives job j's concurrency slot back, its agent having exited,
// and hands it to the first job waiting for one. The task keeps its job
// (nothing else starts for it) until the job ends. Called by j's goroutine.
func (d *Daemon) releaseSlot(j *job) {
	d.slotMu.Lock()
	if !d.dropSlot(j) {
		d.slotMu.Unlock()
		return
	}
	j.finishing = true
	d.finishing++
	// The loop is woken before the slot is granted. In Go's scheduler as
	// it is, a goroutine woken by this one runs next on this processor,
	// and the last one woken goes first: so the job given the slot starts
	// its agent, and the loop, which prepares the job after it, follows.
	// (Only the speed depends on that order.)
	d.kickLoop()
	granted := d.grant()
	d.slotMu.Unlock()
	if granted {
		// Let that job start its agent before this one records its end.
		runtime.Gosched()
	}
}

// dropSlot takes job j's slot, if it holds one, out of the counts and
// reports whether it did. The caller holds d.slotMu.
func (d *Daemon) dropSlot(j *job) bool {
	if !j.slot {
		return false
	}
	j.slot = false
	j.l.slots.running--
	d.running--
	return true
}

// grant gives free slots to the jobs prepared ahead of one, in the order
// the jobs started, and reports whether it gave any. A job that has not
// asked for its slot yet (it is still being prepared) is passed over, and
// so are the later jobs of its list, which would otherwise start before
// it: within a list tasks start in id order, even if that leaves a slot
// free while a task's prompt commands run. The caller holds d.slotMu.
func (d *Daemon) grant() bool {
	granted := false
	d.grants++
	for i := 0; i < len(d.queue) && d.running < d.cfg.Concurrency; i++ {
		j := d.queue[i]
		s := j.l.slots
		if s.passed == d.grants || !d.slotFree(j.l) {
			continue
		}
		if !j.asked {
			s.passed = d.grants
			continue
		}
		d.unqueue(j)
		i--
		j.slot = true
		s.running++
		d.running++
		close(j.granted)
		granted = true
	}
	return granted
}

// listSlots are the slot counts of the jobs of one list id. They outlive
// the list they were made for: a list directory removed and made again
// under the same id, while the jobs of the first still end, gets the same
// counts, so that the new list's limit counts the old list's agents too.
// Guarded by Daemon.slotMu.
type listSlots struct {
	running        int    // jobs holding a slot
	pending        int    // jobs prepared ahead of a free slot
	pendingClaimed int    // of those, claimed jobs (prepClaimed)
	late           int    // jobs queued for a slot as they start an agent (queueLate)
	passed         uint64 // the grant round that passed this list over
	served         bool   // a list of this id is served
}

// serveSlots returns the slot counts of list id, which is served from now
// on: those its jobs left, if a list of the same id went away before them.
func (d *Daemon) serveSlots(id string) *listSlots {
	d.slotMu.Lock()
	defer d.slotMu.Unlock()
	s := d.listSlots[id]
	if s == nil {
		s = &listSlots{}
		d.listSlots[id] = s
	}
	s.served = true
	return s
}

// unserveSlots notes that list l went away; its counts are forgotten once
// its last job has ended.
func (d *Daemon) unserveSlots(l *list) {
	d.slotMu.Lock()
	defer d.slotMu.Unlock()
	l.slots.served = false
	d.forgetSlots(l)
}

// forgetSlots forgets list l's counts if no list of its id is served and
// none of its jobs counts. The caller holds d.slotMu.
func (d *Daemon) forgetSlots(l *list) {
	s := l.slots
	if !s.served && s.running == 0 && s.pending == 0 && s.late == 0 && d.listSlots[l.id] == s {
		delete(d.listSlots, l.id)
	}
}

// kickLoop asks the loop to schedule again, without waiting for it.
func (d *Daemon) kickLoop() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}
