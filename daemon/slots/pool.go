package slots

import (
	"errors"
	"slices"
	"sync"
)

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

// A Pool counts slots: limit in all, per list as its limits say, and per
// agent profile as its profile limits say (none unless set).
type Pool struct {
	limits func(list string) int // a list's limit
	kick   func()                // tells the loop a slot changed hands

	mu             sync.Mutex // protects the fields below and every ticket's
	limit          int
	profileLimits  func(profile string) int // 0: no limit of the profile's
	profiles       map[string]*profileCounts
	running        int       // tickets holding a slot
	finishing      int       // tickets that gave theirs back, still recording
	pending        int       // tickets queued ahead of a free slot
	pendingClaimed int       // of pending, Claimed tickets
	grants         uint64    // grant rounds so far
	queue          []*Ticket // in the order they queued, a list's higher priorities first
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

// profileCounts are the slot counts of the tickets of one agent profile.
type profileCounts struct {
	name             string
	running, pending int
}

// New returns a pool of limit slots in all, limits(list) per list, that
// calls kick (which must not block) when a slot changes hands outside the
// loop.
func New(limit int, limits func(list string) int, kick func()) *Pool {
	return &Pool{limit: limit, limits: limits, kick: kick, lists: map[string]*counts{}, profiles: map[string]*profileCounts{}}
}

// SetLimit changes the number of slots in all. A lower limit stops no
// agent: the slots beyond it are not given again when their agents exit.
func (p *Pool) SetLimit(n int) {
	p.mu.Lock()
	p.limit = max(n, 1)
	p.grant()
	p.mu.Unlock()
	p.kick()
}

// SetProfileLimits makes limits(profile) the number of slots the tickets
// of an agent profile may hold at once (0: no limit but the others).
// Call Changed after a limit changed.
func (p *Pool) SetProfileLimits(limits func(profile string) int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.profileLimits = limits
}

// Changed says that a list's or a profile's limit changed: free slots
// go to the tickets waiting, and the loop is told.
func (p *Pool) Changed() {
	p.mu.Lock()
	p.grant()
	p.mu.Unlock()
	p.kick()
}

// A Tag says what a ticket's task is, for the limits and the order of
// the queue: the agent profile it runs (counted against the profile's
// limit; "" for none known) and its priority (within its list, higher
// goes first).
type Tag struct {
	Profile  string
	Priority int
}

// ErrBumped is Acquire's error for a ticket Bump took out of the queue.
var ErrBumped = errors.New("a task of higher priority took its place in the queue")

// A Ticket is one job's claim on the pool. Its fields are the pool's.
type Ticket struct {
	list      string
	tag       Tag
	pc        *profileCounts // nil: the profile's slots are not counted
	prep      Prep
	c         *counts
	bumped    bool // taken out of the queue by Bump
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
// tagged tag with prep.
func (p *Pool) HasRoom(list string, tag Tag, prep Prep) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.room(p.countsOf(list), list, p.profileOf(tag.Profile), prep)
}

func (p *Pool) room(c *counts, list string, pc *profileCounts, prep Prep) bool {
	switch prep {
	case Late:
		return true // it takes no room until it asks for a slot
	case Wait:
		return p.free(c, list, pc) || p.queueRoom(c, list, pc)
	case Claimed:
		return p.pendingClaimed < p.limit && c.pendingClaimed < p.limits(list) && p.queueRoom(c, list, pc)
	}
	return p.queueRoom(c, list, pc)
}

// profileOf returns the counts of profile, nil if it has no limit. The
// caller holds p.mu.
func (p *Pool) profileOf(profile string) *profileCounts {
	if profile == "" || p.profileLimits == nil || p.profileLimits(profile) <= 0 {
		return nil
	}
	pc := p.profiles[profile]
	if pc == nil {
		pc = &profileCounts{name: profile}
		p.profiles[profile] = pc
	}
	return pc
}

// free reports whether the limits leave a slot free for list (and for
// the profile of counts pc). The caller holds p.mu.
func (p *Pool) free(c *counts, list string, pc *profileCounts) bool {
	if pc != nil && p.profileLimits != nil && pc.running >= p.profileLimits(pc.name) {
		return false
	}
	return p.running < p.limit && c.running < p.limits(list)
}

// queueRoom reports whether another ticket of list (and of the profile of
// counts pc) may wait in the queue. The caller holds p.mu.
func (p *Pool) queueRoom(c *counts, list string, pc *profileCounts) bool {
	if pc != nil && p.profileLimits != nil && pc.pending >= PreparedPerSlot*p.profileLimits(pc.name) {
		return false
	}
	return p.pending < PreparedPerSlot*p.limit && c.pending < PreparedPerSlot*p.limits(list)
}

// RoomToFinish reports whether fewer tickets than the bound are recording
// their ends (FinishingPerSlot), so that new jobs may start.
func (p *Pool) RoomToFinish() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.finishing < FinishingPerSlot*p.limit
}

// Take returns a ticket of list tagged tag with prep, counted as holding
// a slot or as queued for one, if the limits leave room for it, and nil if
// they do not. A queued ticket waits behind those queued before it, but
// ahead of those of its list with a lower priority.
func (p *Pool) Take(list string, tag Tag, prep Prep) *Ticket {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.countsOf(list)
	pc := p.profileOf(tag.Profile)
	if !p.room(c, list, pc, prep) {
		return nil
	}
	t := &Ticket{list: list, tag: tag, pc: pc, prep: prep, c: c, granted: make(chan struct{})}
	if prep == Late {
		return t
	}
	if prep == Wait && p.free(c, list, pc) {
		p.hold(t)
		close(t.granted) // its Acquire returns at once
		return t
	}
	if prep == Wait {
		t.asked = true // nothing to prepare
	}
	t.pending = true
	c.pending++
	p.pending++
	if pc != nil {
		pc.pending++
	}
	if prep == Claimed {
		c.pendingClaimed++
		p.pendingClaimed++
	}
	p.enqueue(t)
	return t
}

// enqueue puts t in the queue: before the first ticket of its list with
// a lower priority, else at the end. The caller holds p.mu.
func (p *Pool) enqueue(t *Ticket) {
	for i, q := range p.queue {
		if q.list == t.list && !q.late && q.tag.Priority < t.tag.Priority {
			p.queue = slices.Insert(p.queue, i, t)
			return
		}
	}
	p.queue = append(p.queue, t)
}

// hold counts t as holding a slot. The caller holds p.mu.
func (p *Pool) hold(t *Ticket) {
	t.slot = true
	t.c.running++
	p.running++
	if t.pc != nil {
		t.pc.running++
	}
}

// Bump takes t out of the queue, if it still waits there for a slot
// (none granted), to make room for a ticket of higher priority: its
// Acquire returns ErrBumped, and its job starts no agent. It reports
// whether it did.
func (p *Pool) Bump(t *Ticket) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !t.pending || t.late || t.bumped {
		return false
	}
	p.unqueue(t)
	t.bumped = true
	close(t.granted) // wakes its Acquire
	p.grant()
	return true
}
