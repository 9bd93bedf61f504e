package slots

import (
	"context"
	"runtime"
	"slices"
)

// Acquire waits until t holds a slot, or ctx ends. A ticket that holds its
// slot returns at once; one that holds none and is not queued queues now,
// behind those queued already. A ticket stopped while it waits leaves the
// queue, and a slot granted to it meanwhile goes to the next ticket
// waiting; so does the slot of a ticket stopped after it was granted one.
// stopped, if not nil, is asked before and after the wait why the ticket
// must not start its agent (ctx's cause, or the daemon stopping before ctx
// has learnt of it); its error is returned.
func (p *Pool) Acquire(ctx context.Context, t *Ticket, stopped func() error) error {
	if stopped == nil {
		stopped = func() error { return context.Cause(ctx) }
	}
	p.mu.Lock()
	if !t.slot && !t.pending {
		// A Late ticket, or one that gave its slot back when its agent
		// exited and starts another agent, queues now, unless stopped.
		if err := stopped(); err != nil {
			p.mu.Unlock()
			return err
		}
		p.queueLate(t)
	}
	if t.pending {
		t.asked = true
		p.grant()
	}
	p.mu.Unlock()
	select {
	case <-t.granted:
	case <-ctx.Done():
	}
	if err := stopped(); err != nil {
		p.mu.Lock()
		p.unqueue(t)
		if p.drop(t) {
			p.grant()
		}
		p.mu.Unlock()
		p.kick()
		return err
	}
	p.kick() // one ticket fewer waits ahead of a slot: prepare another
	return nil
}

// queueLate queues t, which holds no slot and is about to start an agent,
// behind the tickets queued already. It is not counted as prepared ahead
// of a slot: tickets that only wait for their turn must not keep other
// lists from preparing theirs. The caller holds p.mu.
func (p *Pool) queueLate(t *Ticket) {
	t.pending, t.asked, t.late = true, true, true
	t.granted = make(chan struct{})
	t.c.late++
	p.queue = append(p.queue, t)
}

// unqueue takes t out of the queue and the counts, if it is still there.
// The caller holds p.mu.
func (p *Pool) unqueue(t *Ticket) {
	if !t.pending {
		return
	}
	t.pending = false
	switch {
	case t.late:
		t.late = false
		t.c.late--
	case t.prep == Claimed:
		t.c.pendingClaimed--
		p.pendingClaimed--
		fallthrough
	default:
		t.c.pending--
		p.pending--
	}
	p.queue = slices.DeleteFunc(p.queue, func(q *Ticket) bool { return q == t })
}

// Release gives t's slot back, its agent having exited, and hands it to
// the first ticket waiting for one. The ticket's job goes on recording its
// end, counted as finishing, until Done. Called by t's job.
func (p *Pool) Release(t *Ticket) {
	p.mu.Lock()
	if !p.drop(t) {
		p.mu.Unlock()
		return
	}
	t.finishing = true
	p.finishing++
	// The loop is told before the slot is granted. In Go's scheduler as it
	// is, a goroutine woken by this one runs next on this processor, and
	// the last one woken goes first: so the job given the slot starts its
	// agent, and the loop, which prepares the job after it, follows. (Only
	// the speed depends on that order.)
	p.kick()
	granted := p.grant()
	p.mu.Unlock()
	if granted {
		runtime.Gosched() // let that job start its agent before this one records its end
	}
}

// StepAside takes t out of line while its job waits for something a slot
// cannot hasten (a lock another writer holds on its task file, for as
// long as the holder keeps it): a ticket queued ahead of a slot leaves the
// queue, so that the tickets of its list queued behind it are no longer
// passed over for it and another task can be prepared in its place; a
// slot it holds goes to the first ticket waiting. Its job's next Acquire
// queues it again, behind those queued then. Called by t's job.
func (p *Pool) StepAside(t *Ticket) {
	p.mu.Lock()
	left := t.pending && !t.late
	if left {
		p.unqueue(t)
	}
	if p.drop(t) {
		left = true
	}
	if left {
		p.grant()
	}
	p.mu.Unlock()
	if left {
		p.kick() // room for another task to be prepared
	}
}

// Done forgets t: its job has ended. A nil ticket is nothing to forget.
func (p *Pool) Done(t *Ticket) {
	if t == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop(t)
	if t.finishing {
		t.finishing = false
		p.finishing--
	}
	if t.pending {
		// Ended before it asked for its slot: the tickets of its list
		// queued behind it may be waiting for it to go.
		p.unqueue(t)
		p.grant()
	}
	p.forget(t.list, t.c)
}

// drop takes t's slot, if it holds one, out of the counts and reports
// whether it did. The caller holds p.mu.
func (p *Pool) drop(t *Ticket) bool {
	if !t.slot {
		return false
	}
	t.slot = false
	t.c.running--
	p.running--
	return true
}

// grant gives free slots to the queued tickets, in the order they queued,
// and reports whether it gave any. A ticket that has not asked for its
// slot yet (its job still prepares) is passed over, and so are the later
// tickets of its list, which would otherwise start before it: within a
// list tasks start in id order, even if that leaves a slot free while a
// task's prompt commands run. The caller holds p.mu.
func (p *Pool) grant() bool {
	granted := false
	p.grants++
	for i := 0; i < len(p.queue) && p.running < p.limit; i++ {
		t := p.queue[i]
		c := t.c
		if c.passed == p.grants || !p.free(c, t.list) {
			continue
		}
		if !t.asked {
			c.passed = p.grants
			continue
		}
		p.unqueue(t)
		i--
		t.slot = true
		c.running++
		p.running++
		close(t.granted)
		granted = true
	}
	return granted
}

// Grant hands free slots to the tickets waiting for them (after a limit
// changed, say).
func (p *Pool) Grant() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.grant()
}

// Queued returns the tickets of list waiting in the queue.
func (p *Pool) Queued(list string) []*Ticket {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*Ticket
	for _, t := range p.queue {
		if t.list == list {
			out = append(out, t)
		}
	}
	return out
}

// A Usage is a snapshot of the counts, for tests and status.
type Usage struct {
	Running, Finishing, Pending, Queue int
}

// Usage returns the pool's counts.
func (p *Pool) Usage() Usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Usage{Running: p.running, Finishing: p.finishing, Pending: p.pending, Queue: len(p.queue)}
}

// Ready reports whether a slot is there for t: it holds one, or the
// limits leave one free for it even once every ticket queued ahead of it
// has taken one (those that still prepare too: within a list, tickets get
// slots in order). A ticket that is ready gets its slot as soon as it
// asks, and those ahead of it have. An answer, not a promise: slots
// change hands meanwhile.
func (p *Pool) Ready(t *Ticket) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.slot {
		return true
	}
	ahead, aheadInList := 0, 0
	for _, q := range p.queue {
		if q == t {
			break
		}
		ahead++
		if q.list == t.list {
			aheadInList++
		}
	}
	return p.running+ahead < p.limit && t.c.running+aheadInList < p.limits(t.list)
}

// Holds reports whether t holds a slot.
func (p *Pool) Holds(t *Ticket) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return t.slot
}

// Queuing reports whether t waits in the queue for a slot.
func (p *Pool) Queuing(t *Ticket) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return t.pending
}
