package slots

import "sync"

// A Prep says how a ticket's job gets its slot.
type Prep int

const (
	// Late starts without a slot and takes one (in turn with the queued
	// tickets) only when it is about to start an agent, which few jobs of
	// its kind do: recovering a task a dead daemon left running may apply
	// a step's result and go on to the workflow's next step, say. It keeps
	// the slot until the job ends.
	Late Prep = iota
	// Claimed is prepared ahead of a slot: its task is claimed and its run
	// folder made while other agents run.
	Claimed
	// Wait takes a free slot when it starts, or else waits in the queue for
	// one, in turn with the prepared tickets, before its job does anything:
	// a freed slot goes straight to a queued ticket, so a job that only took
	// free slots would wait until no other list had any.
	Wait
)

// PreparedPerSlot is how many tickets per slot may wait in the queue for a
// free slot. Of these at most one per slot may be Claimed (its task file
// says in_progress while it waits); the others are jobs that prepare
// nothing (Wait): a parent to resume, an answer to apply. With a claimed
// task waiting, a slot freed by a short agent is handed over without
// waiting for the next task's claim to be written.
const PreparedPerSlot = 2

// FinishingPerSlot bounds the jobs still recording their end (their agent
// exited, their slot is free) per slot: while that many are recording, no
// new job starts. A short agent ends faster than its end is written (a
// temporary file, fsync, rename, directory fsync), so with one per slot
// the next agent waited for the write before it; four per slot keep the
// slots busy and still bound the work in memory when the disk stalls.
const FinishingPerSlot = 4

// A Pool counts slots: limit in all, and per list as its Limits say.
type Pool struct {
	limit  int
	limits func(list string) int // a list's limit
	kick   func()                // tells the loop a slot changed hands

	mu             sync.Mutex // protects the fields below and every ticket's
	running        int        // tickets holding a slot
	finishing      int        // tickets that gave theirs back, still recording
	pending        int        // tickets queued ahead of a free slot
	pendingClaimed int        // of pending, Claimed tickets
	grants         uint64     // grant rounds so far
	queue          []*Ticket  // in the order they queued
	lists          map[string]*counts
}

// counts are the slot counts of the tickets of one list id. They outlive
// the list they were made for: a list directory removed and made again
// under the same id, while the jobs of the first still end, gets the same
// counts, so that the new list's limit counts the old list's agents too.
type counts struct {
	running        int
	pending        int
	pendingClaimed int
	late           int    // tickets queued for a slot as they start an agent
	passed         uint64 // the grant round that passed this list over
	served         bool   // a list of this id is served
}

// New returns a pool of limit slots in all, limits(list) per list, that
// calls kick (which must not block) when a slot changes hands outside the
// loop.
func New(limit int, limits func(list string) int, kick func()) *Pool {
	return &Pool{limit: limit, limits: limits, kick: kick, lists: map[string]*counts{}}
}

// A Ticket is one job's claim on the pool. Its fields are the pool's.
type Ticket struct {
	list      string
	prep      Prep
	c         *counts
	slot      bool // holds a slot
	pending   bool // queued, holds none yet
	finishing bool // gave its slot back, still recording
	late      bool // pending, queued as it starts an agent
	asked     bool // a prepared ticket asked for its slot
	granted   chan struct{}
}

// Serve starts serving list; its counts are kept from a list of the same
// id that went away while its jobs still ran.
func (p *Pool) Serve(list string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.countsOf(list).served = true
}

// Unserve notes that list went away; its counts are forgotten once its
// last ticket is done.
func (p *Pool) Unserve(list string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.countsOf(list)
	c.served = false
	p.forget(list, c)
}

func (p *Pool) countsOf(list string) *counts {
	c := p.lists[list]
	if c == nil {
		c = &counts{}
		p.lists[list] = c
	}
	return c
}

// forget drops list's counts if no list of its id is served and no ticket
// counts in them. The caller holds p.mu.
func (p *Pool) forget(list string, c *counts) {
	if !c.served && c.running == 0 && c.pending == 0 && c.late == 0 && p.lists[list] == c {
		delete(p.lists, list)
	}
}

// HasRoom reports whether the limits leave room for a new ticket of list
// with prep.
func (p *Pool) HasRoom(list string, prep Prep) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.room(p.countsOf(list), list, prep)
}

func (p *Pool) room(c *counts, list string, prep Prep) bool {
	switch prep {
	case Late:
		return true // it takes no room until it asks for a slot
	case Wait:
		return p.free(c, list) || p.queueRoom(c, list)
	case Claimed:
		return p.pendingClaimed < p.limit && c.pendingClaimed < p.limits(list) && p.queueRoom(c, list)
	}
	return p.queueRoom(c, list)
}

// free reports whether the limits leave a slot free for list. The caller
// holds p.mu.
func (p *Pool) free(c *counts, list string) bool {
	return p.running < p.limit && c.running < p.limits(list)
}

// queueRoom reports whether another ticket of list may wait in the queue.
// The caller holds p.mu.
func (p *Pool) queueRoom(c *counts, list string) bool {
	return p.pending < PreparedPerSlot*p.limit && c.pending < PreparedPerSlot*p.limits(list)
}

// RoomToFinish reports whether fewer tickets than the bound are recording
// their ends (FinishingPerSlot), so that new jobs may start.
func (p *Pool) RoomToFinish() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.finishing < FinishingPerSlot*p.limit
}

// Take returns a ticket of list with prep, counted as holding a slot or as
// queued for one, if the limits leave room for it, and nil if they do not.
func (p *Pool) Take(list string, prep Prep) *Ticket {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.countsOf(list)
	if !p.room(c, list, prep) {
		return nil
	}
	t := &Ticket{list: list, prep: prep, c: c, granted: make(chan struct{})}
	if prep == Late {
		return t
	}
	if prep == Wait && p.free(c, list) {
		t.slot = true
		c.running++
		p.running++
		close(t.granted) // its Acquire returns at once
		return t
	}
	if prep == Wait {
		t.asked = true // nothing to prepare
	}
	t.pending = true
	c.pending++
	p.pending++
	if prep == Claimed {
		c.pendingClaimed++
		p.pendingClaimed++
	}
	p.queue = append(p.queue, t)
	return t
}
