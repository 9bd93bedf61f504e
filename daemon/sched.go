package daemon

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/slots"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// consider marks task id for evaluation at the next schedule.
func (l *list) consider(id string) {
	l.candidates[id] = struct{}{}
}

// finishingPerSlot bounds the jobs still recording their end (their agent
// exited, their slot is free) per concurrency slot: while that many are
// recording, no new job starts (jobs already started still get their
// slots). A short agent ends faster than its end is written (a temporary
// file, fsync, rename, directory fsync, on a busy disk a few
// milliseconds), so with one job recording per slot the next agent waited
// for the write before it; four per slot keep the slots busy (about 15%
// more tasks of `true` per second with one or two slots on a virtual disk)
// and still bound the work in memory when the disk stalls. A crash in
// between costs at most a re-run: the agent's result.json is written as
// soon as it has exited, and an attempt without one is recorded as
// interrupted on restart and run again.
const finishingPerSlot = 4

// schedule evaluates the marked tasks and starts jobs while there are free
// slots: globally cfg.Concurrency, per list its configured limit. Lists are
// served round-robin so one busy list cannot starve the others; within a
// list tasks start by priority, the highest first, then in id order.
func (d *Daemon) schedule() {
	for _, id := range d.order {
		l := d.lists[id]
		if len(l.candidates) == 0 {
			continue
		}
		ids := make([]string, 0, len(l.candidates))
		for tid := range l.candidates {
			ids = append(ids, tid)
		}
		clear(l.candidates)
		taskfile.SortIDs(ids)
		for _, tid := range ids {
			d.evaluate(l, tid)
		}
	}
	d.slots.Grant()
	for d.slots.RoomToFinish() {
		started := false
		for range d.order {
			l := d.lists[d.order[d.next%len(d.order)]]
			d.next++
			if d.startNext(l) {
				started = true
				break
			}
		}
		if !started {
			return
		}
	}
}

// readyScan bounds how far into a list's ready queue startNext looks for
// a task the limits leave room for, past tasks whose agent profile has
// no slot free.
const readyScan = 64

// startNext starts the job of the first task of l's ready queue the
// limits leave room for, and reports whether it did. A task of higher
// priority than one prepared ahead of its slot takes that one's place
// (bump).
func (d *Daemon) startNext(l *list) bool {
	type noRoom struct {
		profile string
		prep    slots.Prep
	}
	var full []noRoom // what the limits left no room for in this look (few: a map costs more)
	bumped, floor := l.bumpedFloor()
	for i := 0; i < len(l.ready) && i < readyScan; i++ {
		rt := l.ready[i]
		if bumped && rt.priority < floor {
			return false // a task bumped from its place comes back first
		}
		e := rt.e // l.entries[rt.id], looked up again for the task it starts
		kind := job.Run
		if e != nil {
			kind = e.kind()
		}
		// A task that will run gets its job (and so its claim and its run
		// folder) while the agents before it still run: its agent starts
		// the moment a slot is free. Other jobs that need a slot take one
		// at once.
		p := slots.Wait
		if kind == job.Run {
			p = slots.Claimed
		}
		tag := l.tagOf(rt, e)
		// A task is passed over only for one of another agent profile or
		// another kind of slot: the pool changes hands while the loop
		// looks (jobs release their slots), and a later task like one
		// found without room must not take the room freed meanwhile.
		key := noRoom{tag.Profile, p}
		if slices.Contains(full, key) {
			continue
		}
		if !d.slots.HasRoom(l.ID, tag, p) && (i > 0 || !d.bump(l, rt) || !d.slots.HasRoom(l.ID, tag, p)) {
			full = append(full, key)
			continue
		}
		l.ready = slices.Delete(l.ready, i, i+1)
		delete(l.inReady, rt.id)
		// The entry the queue holds is the task's (forget takes a task
		// out of the queue with its entry); the map decides all the same.
		e = l.entries[rt.id]
		// runnable may look at files: it is asked after the room.
		if e == nil || e.job != nil || !l.runnable(rt.id, e) {
			i--
			continue
		}
		if !d.startJob(l, rt.id, kind, p) {
			// A waiting job was given the slot meanwhile: this task keeps
			// its place in its list's queue.
			l.ready = slices.Insert(l.ready, i, rt)
			l.inReady[rt.id] = true
			return false
		}
		return true
	}
	return false
}

// evaluate decides what task id needs: nothing, a quick bookkeeping job
// (cancel a task that is not running, recover one a dead daemon left
// running), or a place in the ready queue.
func (d *Daemon) evaluate(l *list, id string) {
	e := l.entries[id]
	if e == nil || !e.owned || e.reject != "" || e.job != nil || e.archived || l.refused != nil {
		return
	}
	if d.clock.Now().Before(e.holdUntil) {
		return
	}
	if d.settle(l, id, e) {
		return // ended without running (settle.go)
	}
	if e.state.Claimed() {
		d.startJob(l, id, job.Recover, slots.Late)
		return
	}
	if e.recur != nil {
		d.evaluateSchedule(l, id, e) // a schedule runs nothing itself (recur.go)
		return
	}
	if e.parent != "" && !e.delivered && e.state.Ended() && e.scheduledFor.IsZero() {
		d.startJob(l, id, job.Deliver, slots.Late)
		return
	}
	if e.waitsForTime() && d.clock.Now().Before(e.notBefore) {
		l.waitUntil(id, e.notBefore) // not before its time (notBefore)
		return
	}
	if (e.state == task.Retrying || e.state == task.Paused) && d.clock.Now().Before(e.retryAt) {
		if l.nextRetry.IsZero() || e.retryAt.Before(l.nextRetry) {
			l.nextRetry = e.retryAt
		}
		return
	}
	if !l.runnable(id, e) {
		d.checkCycle(l, id, e)
		return
	}
	if !d.admitted(l, id, e) {
		return // its list's or profile's window is closed, or its budget spent (admission.go)
	}
	l.enqueue(id, e)
}

// runnable reports whether task id should get a slot now (docs/tasks.md).
func (l *list) runnable(id string, e *entry) bool {
	if !e.owned || e.reject != "" || e.archived || e.cancel || e.recur != nil {
		return false
	}
	switch e.state {
	case task.None, task.Retrying, task.Paused:
		if e.status != taskfile.StatusPending || l.clock.Now().Before(e.retryAt) || l.heldByPause(id, e, l.pauses) {
			return false
		}
		return l.blockersDone(e)
	case task.NeedsHuman:
		return e.resolve != ""
	case task.Succeeded:
		return e.boundary && e.resolve == "continue" // walks on past a stage boundary
	case task.Waiting:
		if e.wait != nil {
			return l.waitDone(e) // suspended by /handoff or /converge (waits.go)
		}
		return l.childrenDone(e)
	}
	return false
}

// blockersDone reports whether every task e is blocked by is completed. An
// id that names no task (yet) blocks: files may arrive in any order, and a
// task must not start before a blocker that is about to be written. (Claude
// Code removes a deleted task's id from every blockedBy list.) The first
// step of a return chain is blocked by the chain's origin, which waits for
// its chain once its agent has succeeded: that is done enough.
func (l *list) blockersDone(e *entry) bool {
	for _, b := range e.blockedBy {
		be := l.entries[b]
		if be == nil {
			return false
		}
		if be.status != taskfile.StatusCompleted && !(b == e.returnOf && be.state == task.Waiting) {
			return false
		}
	}
	return true
}

// checkCycle records (or clears) a blockedBy cycle through task id. A task
// in a cycle can never run; it is reported like a rejected file, and the
// report goes away when the cycle is broken.
func (d *Daemon) checkCycle(l *list, id string, e *entry) {
	var problem string
	if e.state == task.None && e.status == taskfile.StatusPending {
		if cycle := l.cycle(id); cycle != nil {
			problem = "blockedBy forms a cycle: " + strings.Join(cycle, " → ")
		}
	}
	if problem == e.cycle {
		return
	}
	old := e.cycle
	e.cycle = problem
	if problem == "" {
		fsroot.Remove(l.Dir.Path(), rejectPath(l, id))
		// The other members look again: the cycle may be broken for all.
		for _, m := range cycleMembers(old) {
			if m != id && l.entries[m] != nil {
				l.consider(m)
			}
		}
		return
	}
	e.reject = "" // reject records only what changed
	d.reject(l, id, e, problem, "Remove one of the ids from a blockedBy list so the tasks can run one after another.")
	e.reject = ""
	// Every member is reported, not only those whose change closed the
	// cycle (the others were looked at before it was one).
	for _, m := range cycleMembers(problem) {
		if me := l.entries[m]; m != id && me != nil && me.owned && me.reject == "" && me.job == nil {
			d.checkCycle(l, m, me)
		}
	}
}

// childrenDone reports whether every child a waiting parent waits for has
// ended (succeeded, failed, cancelled, timed out, stopped) or is gone.
func (l *list) childrenDone(e *entry) bool {
	for _, c := range e.children {
		ce := l.entries[c]
		if ce == nil {
			// Not seen yet: a child created a moment ago whose event is
			// still queued. Only a child whose file is gone is done.
			if _, err := os.Lstat(l.Dir.File(c)); err == nil {
				return false
			}
			continue
		}
		if !terminal(ce) {
			return false
		}
	}
	return true
}

func terminal(e *entry) bool {
	switch e.state {
	case task.Succeeded, task.Failed, task.Cancelled, task.TimedOut, task.Stopped:
		return true
	}
	return e.archived || e.reject != ""
}

// cycle returns the ids of a blockedBy cycle through id, or nil.
func (l *list) cycle(id string) []string {
	var path []string
	onPath := map[string]bool{}
	seen := map[string]bool{}
	var visit func(string) []string
	visit = func(n string) []string {
		if onPath[n] {
			i := slices.Index(path, n)
			return append(slices.Clone(path[i:]), n)
		}
		if seen[n] || len(path) > 1000 {
			return nil
		}
		seen[n] = true
		e := l.entries[n]
		if e == nil || e.status == taskfile.StatusCompleted {
			return nil
		}
		onPath[n] = true
		path = append(path, n)
		for _, b := range e.blockedBy {
			if c := visit(b); c != nil {
				return c
			}
		}
		path = path[:len(path)-1]
		onPath[n] = false
		return nil
	}
	c := visit(id)
	if c == nil || c[0] != id {
		return nil // a cycle further down is reported on its own members
	}
	return c
}

// wakeDue re-reads files whose re-check is due and re-evaluates tasks whose
// retry time has come.
func (d *Daemon) wakeDue() {
	now := d.clock.Now()
	for _, l := range d.lists {
		if !l.nextRecheck.IsZero() && !now.Before(l.nextRecheck) {
			l.nextRecheck = time.Time{}
			for id, at := range l.recheck {
				if !now.Before(at) {
					delete(l.recheck, id)
					d.refresh(l, id)
					l.consider(id) // a task held back after job errors
				} else if l.nextRecheck.IsZero() || at.Before(l.nextRecheck) {
					l.nextRecheck = at
				}
			}
		}
		l.wakeTimed(now)
		if !l.nextRetry.IsZero() && !now.Before(l.nextRetry) {
			l.nextRetry = time.Time{}
			for id, e := range l.entries {
				if e.state == task.Retrying || e.state == task.Paused {
					l.consider(id)
				}
			}
		}
	}
	d.wakePaused(now)
}

func (e *entry) kind() job.Kind {
	switch e.state {
	case task.Waiting:
		return job.Resume
	case task.NeedsHuman:
		return job.Answer
	case task.Succeeded:
		if e.boundary {
			return job.Answer // continue past a stage boundary
		}
	}
	return job.Run
}

// A work is a job the loop started: the job, the list it works in, its
// slot and how to stop it.
type work struct {
	*job.Job
	l        *list
	slot     *slot
	stop     context.CancelCauseFunc
	priority int  // the task's priority when its job started
	bumped   bool // its ticket was taken out of the queue for a task of higher priority
}

// A slot is a job's concurrency slot: its ticket of the daemon's pool.
// A job started without one (slots.Late) keeps what it acquires until
// it ends.
type slot struct {
	d             *Daemon
	ticket        *slots.Ticket
	late          bool
	list, profile string // whose admission the first Acquire asks
	acquired      bool   // Acquire was called (by the job's goroutine)
	exited        bool   // an agent of it exited: its cost counts as unknown until recorded (admission.go)
	release       sync.Once
}

// Acquire implements job.Slot. A job's first slot is taken only while
// its list and profile admit it (admission.go): a task prepared ahead of
// its slot does not start if its window closed meanwhile.
func (s *slot) Acquire(ctx context.Context) error {
	first := !s.acquired && !s.late
	s.acquired = true
	return s.d.slots.Acquire(ctx, s.ticket, func() error {
		if err := s.d.stopCause(ctx); err != nil || !first {
			return err
		}
		return s.d.admitsNow(s.list, s.profile)
	})
}

// Ready implements job.Slot.
func (s *slot) Ready() bool { return s.d.slots.Ready(s.ticket) }

// StepAside implements job.Slot.
func (s *slot) StepAside() { s.d.slots.StepAside(s.ticket) }

// Release implements job.Slot.
func (s *slot) Release() {
	s.release.Do(func() {
		if !s.late {
			if s.d.slots.Holds(s.ticket) {
				s.exited = s.d.admit.Exited(s.list, s.profile)
			}
			s.d.slots.Release(s.ticket)
		}
	})
}

// jobDone reports a job's end to the loop with the task as the job last
// wrote it (nil if it wrote nothing or does not know).
type jobDone struct {
	job  *work
	task *taskfile.Task
	err  error
}

// startJob starts a job of kind on task id, which gets its concurrency
// slot as p says: it takes a free one now and else waits for one before
// it does anything (slots.Wait), or it is prepared ahead of one and
// acquires it later (job.acquire), when its agent is about to start; if
// the limits leave no room for that, nothing starts and startJob reports
// false. A slots.Late job starts at once and takes a slot only if it
// starts an agent. Every agent starts holding a slot: runAttempt acquires
// the job's (jobSlot) unless the attempt says how to. Called by the loop.
func (d *Daemon) startJob(l *list, id string, kind job.Kind, p slots.Prep) bool {
	e := l.entries[id]
	ticket := d.slots.Take(l.ID, l.tagOf(readyTask{id: id, priority: e.priority}, e), p)
	if ticket == nil {
		return false
	}
	w := &work{l: l, slot: &slot{d: d, ticket: ticket, late: p == slots.Late, list: l.ID, profile: e.profile}, priority: e.priority}
	if p == slots.Claimed || p == slots.Wait {
		l.preparedJobs()[id] = w
	}
	w.Job = &job.Job{Scope: d.inspect(l, id), Kind: kind, Slot: w.slot}
	l.handRead(id, e, w, p == slots.Wait)
	ctx, stop := context.WithCancelCause(d.ctx)
	w.stop = stop
	e.job = w
	d.live++
	d.jobs.Add(1)
	go func() {
		defer d.jobs.Done()
		var tf *taskfile.Task
		err := errNotRunnable // stopped while it waited for its slot
		if p != slots.Wait || w.slot.Acquire(ctx) == nil {
			tf, err = d.work(w.StepAsideOnLock(ctx), w.Job)
		}
		stop(nil)
		d.done <- jobDone{job: w, task: tf, err: err}
	}()
	return true
}

// finished takes a job's report.
func (d *Daemon) finished(msg jobDone) {
	j := msg.job
	d.live--
	d.slots.Done(j.slot.ticket)
	if j.l.prepared[j.ID] == j {
		delete(j.l.prepared, j.ID)
	}
	if j.slot.exited {
		defer d.costRecorded(j)
	}
	if msg.err != nil && msg.err != errNotRunnable && fileGone(j.l, j.ID, msg.err) {
		// Its task file was removed while it worked (taskd rm --force, a
		// person's rm): nothing outside the task went wrong, and the task
		// is not held; the loop forgets it (refresh, below).
		d.log.Debug("task job ended: its file is gone", "list", j.l.ID, "task", j.ID, "err", msg.err)
		msg.err = errNotRunnable
	}
	if msg.err != nil && msg.err != errNotRunnable {
		d.log.Warn("task job", "list", j.l.ID, "task", j.ID, "err", msg.err)
	}
	if d.lists[j.l.ID] != j.l {
		// The list went away meanwhile, and the task's file with it:
		// nothing will record the end of a result kept for it.
		if fileGone(j.l, j.ID, fs.ErrNotExist) {
			d.forgetKept(j.l, j.ID)
		}
		return
	}
	e := j.l.entries[j.ID]
	if e == nil || e.job != j {
		if w, ok := j.l.goneWorktrees[j.ID]; ok && e == nil {
			delete(j.l.goneWorktrees, j.ID)
			d.removeWorktree(j.l.List, j.ID, w)
		}
		if e == nil && fileGone(j.l, j.ID, fs.ErrNotExist) {
			d.forgetKept(j.l, j.ID)
		}
		return
	}
	e.job = nil
	if msg.err != nil && msg.err != errNotRunnable {
		// Something outside the task went wrong (a full disk, a lock
		// nobody can take, a link in .taskd): the task is held, with the
		// reason where taskd status shows it, and tried again later, more
		// slowly each time. A refusal of the path rule is recorded the
		// first time.
		if e.jobErrors == 0 && refusedPath(msg.err) {
			j.l.Events.Append(eventlog.Event{Type: eventlog.PathRefused, List: j.l.ID, Task: j.ID, Data: map[string]any{"error": msg.err.Error()}})
		}
		e.jobErrors++
		e.holdUntil = d.clock.Now().Add(job.HoldBackoff(e.jobErrors))
		j.l.recheckAt(j.ID, e.holdUntil)
		if d.ctx.Err() == nil { // not a job cut short by the daemon's stop
			j.Hold(msg.err.Error(), e.holdUntil, e.parent)
		}
	} else {
		if e.jobErrors > 0 {
			j.Unhold()
		}
		e.jobErrors, e.holdUntil = 0, time.Time{}
		e.settleMissed(j.Kind, msg.err == errNotRunnable, d.clock.Now())
		if !e.holdUntil.IsZero() {
			j.l.recheckAt(j.ID, e.holdUntil)
		}
	}
	// The task as the job last wrote it is the file, unless the file was
	// last seen, while the job ran, with other contents: that may have
	// been another writer, whose change the job's report does not hold (a
	// parent's job restarting this child while its delivery job ran, say).
	// Then the file is read again, and what it says is acted on. (A change
	// not seen yet comes with its own event.)
	changed := e.changedInJob
	e.changedInJob = false
	if msg.task != nil {
		if h := hashBytes(msg.task.Raw()); !changed || e.hash == h {
			e.hash = h
			d.observe(j.l, j.ID, e, msg.task)
			j.l.keepRead(j.ID, e, msg.task)
			return
		}
	}
	e.hash = 0 // unknown: read it again
	d.refresh(j.l, j.ID)
}

// fileGone reports whether err, a job's, is task id's file of l missing,
// and it is still missing.
func fileGone(l *list, id string, err error) bool {
	if !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	_, serr := os.Lstat(l.Dir.File(id))
	return errors.Is(serr, fs.ErrNotExist)
}

// errNotRunnable ends a job whose task changed before it could start.
var errNotRunnable = job.ErrNotRunnable

func itoa(n int) string { return strconv.Itoa(n) }

// cycleMembers returns the ids of the cycle a checkCycle problem names.
func cycleMembers(problem string) []string {
	_, ids, ok := strings.Cut(problem, ": ")
	if !ok {
		return nil
	}
	return strings.Split(ids, " → ")
}

// inspect returns task id of l as the daemon's environment sees it: what
// a job on it starts from, and what the loop's checks before a claim
// take (the list's command files, the configuration).
func (d *Daemon) inspect(l *list, id string) job.Scope {
	return job.Scope{Env: d.env, List: l.List, ID: id}
}
