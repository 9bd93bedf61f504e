package daemon

import (
	"errors"

	"github.com/taskd/taskd/daemon/parallel"
	"github.com/taskd/taskd/daemon/task"
)

// What holds back a task that could run (package admit): its list's or
// its profile's windows and their budgets, checked when the loop would
// start it and again when its slot comes; and the concurrency a person
// changed while the daemon runs (package parallel), which takes the place
// of the configuration's.

// errHeld keeps a prepared task's agent from starting: its list or its
// profile does not admit it now. Its claim is taken back and the loop
// decides on it again.
var errHeld = errors.New("its list or profile does not start tasks now")

// admitted reports whether task id of l (entry e, which could run) may
// start now; if not, the task waits until its hold may end, and for
// anything that may lift it sooner.
func (d *Daemon) admitted(l *list, id string, e *entry) bool {
	now := d.clock.Now()
	h, held := d.admit.Check(l.ID, e.profile, now)
	if !held {
		delete(l.admitHeld, id)
		return true
	}
	if l.admitHeld == nil {
		l.admitHeld = map[string]string{}
	}
	if l.admitHeld[id] != h.Reason {
		d.log.Debug("task held back", "list", l.ID, "task", id, "reason", h.Reason)
		l.admitHeld[id] = h.Reason
	}
	if !h.Until.IsZero() {
		l.waitUntil(id, h.Until)
	}
	return false
}

// admitsNow is the slot's check, just before a prepared task's agent
// starts (slot.Acquire).
func (d *Daemon) admitsNow(list, profile string) error {
	if _, held := d.admit.Check(list, profile, d.clock.Now()); held {
		return errHeld
	}
	return nil
}

// spend counts what the attempt task t (entry e) records cost toward its
// list's and its profile's budgets, once per attempt.
func (d *Daemon) spend(l *list, e *entry) {
	if e.state == task.Running || !d.admit.Bounded(l.ID, e.profile) {
		return
	}
	cost, at := e.costUSD, e.startedAt
	if cost == nil || at.IsZero() || at.Equal(e.spentFor) {
		return
	}
	e.spentFor = at
	if spent := d.admit.Spend(l.ID, e.profile, at, *cost, d.clock.Now()); len(spent) > 0 {
		for _, s := range spent {
			d.log.Info("a budget per window is spent: no more tasks start until the next window", "what", s.Scope.String(), "spent", s.Spent, "until", s.Until)
		}
		d.pauseBudgets(spent)
	}
}

// costRecorded says job j's end is recorded (finished observed its task,
// and so counted its cost): the tasks held back while it was not are
// looked at again.
func (d *Daemon) costRecorded(j *work) {
	d.admit.Recorded(j.slot.list, j.slot.profile)
	for _, l := range d.lists {
		for id := range l.admitHeld {
			l.consider(id)
		}
	}
}

// readParallel applies the root's parallel file: the limits it sets take
// the place of the configuration's. A file that cannot be read changes
// nothing (and is reported once).
func (d *Daemon) readParallel() {
	r, err := parallel.Read(d.cfg.Root)
	if err != nil {
		if msg := err.Error(); msg != d.parallelErr {
			d.parallelErr = msg
			d.log.Warn("the parallel file is not read", "err", err)
		}
		return
	}
	d.parallelErr = ""
	old := d.parallel.Swap(&r)
	if old != nil && equalParallel(*old, r) {
		return
	}
	if old != nil || !equalParallel(parallel.Record{}, r) { // at the start, only a file that sets a limit is news
		d.log.Info("concurrency", "all", d.concurrency(), "lists", r.Lists, "profiles", r.Profiles)
	}
	d.slots.SetLimit(d.concurrency())
	d.slots.Changed()
}

func equalParallel(a, b parallel.Record) bool {
	if a.All != b.All || len(a.Lists) != len(b.Lists) || len(a.Profiles) != len(b.Profiles) {
		return false
	}
	for k, v := range a.Lists {
		if b.Lists[k] != v {
			return false
		}
	}
	for k, v := range a.Profiles {
		if b.Profiles[k] != v {
			return false
		}
	}
	return true
}

// concurrency is the number of agents at once in all.
func (d *Daemon) concurrency() int {
	if r := d.parallel.Load(); r != nil && r.All > 0 {
		return r.All
	}
	return d.cfg.Concurrency
}

// listLimit is the number of agents of list id at once.
func (d *Daemon) listLimit(id string) int {
	if r := d.parallel.Load(); r != nil {
		if n := r.Lists[id]; n > 0 {
			return n
		}
	}
	if n, ok := d.cfg.ListLimits[id]; ok {
		return n
	}
	return d.concurrency()
}

// profileLimit is the number of agents of profile at once (0: no bound
// of its own).
func (d *Daemon) profileLimit(profile string) int {
	if r := d.parallel.Load(); r != nil {
		if n := r.Profiles[profile]; n > 0 {
			return n
		}
	}
	if p := d.cfg.Profiles[profile]; p != nil {
		return p.Concurrency
	}
	return 0
}
