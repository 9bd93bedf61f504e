package slots_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/taskd/taskd/daemon/slots"
)

func limits(n int) func(string) int { return func(string) int { return n } }

func nop() {}

// TestPool_StoppingWhileGranted: when the daemon stops, its jobs learn of
// it one after another. A ticket whose agent was stopped first gives its
// slot to a ticket waiting for one that has not been told yet; that
// ticket must not start its agent, and the slot must not stay held.
func TestPool_StoppingWhileGranted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		daemon, stopDaemon := context.WithCancelCause(context.Background())
		errStop := errors.New("daemon stopping")
		p := slots.New(1, limits(1), nop)
		p.Serve("l")
		holder := p.Take("l", slots.Wait)
		waiter := p.Take("l", slots.Claimed)
		if holder == nil || waiter == nil {
			t.Fatal("no room for two tickets with one slot")
		}
		acquired := make(chan error, 1)
		go func() {
			acquired <- p.Acquire(context.Background(), waiter, func() error { return context.Cause(daemon) })
		}()
		synctest.Wait()
		stopDaemon(errStop)
		p.Release(holder) // its agent, stopped, exited
		synctest.Wait()
		select {
		case err := <-acquired:
			if !errors.Is(err, errStop) {
				t.Errorf("Acquire during the stop = %v, want %v", err, errStop)
			}
		default:
			t.Fatal("Acquire did not return after the slot's release")
		}
		if got, want := p.Usage(), (slots.Usage{Finishing: 1}); got != want {
			t.Errorf("after the stop: %+v, want %+v", got, want)
		}
	})
}

// TestPool_Limits: the global limit and each list's limit bound the
// tickets holding slots; a released slot goes to the first ticket queued
// that its list's limit allows.
func TestPool_Limits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := slots.New(2, func(list string) int {
			if list == "narrow" {
				return 1
			}
			return 2
		}, nop)
		a := p.Take("narrow", slots.Wait)
		b := p.Take("narrow", slots.Wait) // queued: narrow allows one
		c := p.Take("wide", slots.Wait)
		if a == nil || b == nil || c == nil {
			t.Fatal("no room")
		}
		if !p.Holds(a) || p.Holds(b) || !p.Holds(c) {
			t.Fatalf("holds a %v b %v c %v, want true false true", p.Holds(a), p.Holds(b), p.Holds(c))
		}
		got := make(chan error, 1)
		go func() { got <- p.Acquire(context.Background(), b, nil) }()
		synctest.Wait()
		select {
		case <-got:
			t.Fatal("b got a slot while a held narrow's only one")
		default:
		}
		p.Release(a)
		synctest.Wait()
		if err := <-got; err != nil || !p.Holds(b) {
			t.Errorf("after a's release: Acquire = %v, holds %v", err, p.Holds(b))
		}
		p.Done(a)
		p.Done(b)
		p.Done(c)
		if got, want := p.Usage(), (slots.Usage{}); got != want {
			t.Errorf("after all done: %+v, want %+v", got, want)
		}
	})
}

// TestPool_OrderWithinList: a prepared ticket that has not asked for its
// slot yet holds back the later tickets of its list, which would otherwise
// start before it; another list's tickets go on.
func TestPool_OrderWithinList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := slots.New(1, limits(1), nop)
		run := p.Take("l", slots.Wait)
		first := p.Take("l", slots.Claimed) // prepares, has not asked
		second := p.Take("l", slots.Wait)   // asks at once
		if run == nil || first == nil || second == nil {
			t.Fatal("no room")
		}
		p.Release(run)
		if p.Holds(second) {
			t.Fatal("a later ticket of the list got the slot before the one prepared ahead of it")
		}
		done := make(chan error, 1)
		go func() { done <- p.Acquire(context.Background(), first, nil) }()
		synctest.Wait()
		if err := <-done; err != nil || !p.Holds(first) {
			t.Errorf("first: Acquire = %v, holds %v", err, p.Holds(first))
		}
	})
}

// TestPool_StepAside: a prepared ticket whose job waits for a lock steps
// aside: the later tickets of its list are no longer held back, and room
// is made to prepare another; a ticket that holds a slot gives it to the
// first one waiting. Each queues again, at the back, when it asks.
func TestPool_StepAside(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var kicks atomic.Int32 // the pool kicks from its callers' goroutines
		p := slots.New(1, limits(1), func() { kicks.Add(1) })
		run := p.Take("l", slots.Wait)
		held := p.Take("l", slots.Claimed) // its claim waits for a lock
		if run == nil || held == nil {
			t.Fatal("no room")
		}
		if p.HasRoom("l", slots.Claimed) {
			t.Fatal("room for a second claimed ticket with one slot")
		}
		p.StepAside(held)
		if kicks.Load() == 0 {
			t.Error("the loop was not told of the room made")
		}
		if !p.HasRoom("l", slots.Claimed) || p.Queuing(held) {
			t.Fatal("a ticket that stepped aside still takes its place in line")
		}
		next := p.Take("l", slots.Claimed)
		acquire := func(tk *slots.Ticket) chan error {
			c := make(chan error, 1)
			go func() { c <- p.Acquire(context.Background(), tk, nil) }()
			return c
		}
		nextDone := acquire(next)
		synctest.Wait()
		p.Release(run)
		synctest.Wait()
		if err := <-nextDone; err != nil || !p.Holds(next) {
			t.Fatalf("the ticket behind the one that stepped aside: Acquire = %v, holds %v", err, p.Holds(next))
		}
		// The lock is released: the ticket asks, queued behind next.
		heldDone := acquire(held)
		synctest.Wait()
		if p.Holds(held) {
			t.Fatal("the ticket that stepped aside got a slot that was not free")
		}
		// next's job waits for a lock between agents: its slot goes on.
		p.StepAside(next)
		synctest.Wait()
		if err := <-heldDone; err != nil || !p.Holds(held) || p.Holds(next) {
			t.Errorf("after next stepped aside: Acquire = %v, held holds %v, next holds %v", err, p.Holds(held), p.Holds(next))
		}
		p.Done(run) // its end is recorded
		if got, want := p.Usage(), (slots.Usage{Running: 1}); got != want {
			t.Errorf("usage %+v, want %+v", got, want)
		}
	})
}

// TestPool_Room: the queue holds PreparedPerSlot tickets per slot, at most
// one claimed per slot; Late tickets take no room until they ask.
func TestPool_Room(t *testing.T) {
	p := slots.New(1, limits(1), nop)
	if p.Take("l", slots.Wait) == nil {
		t.Fatal("no room for the first ticket")
	}
	if p.Take("l", slots.Claimed) == nil {
		t.Fatal("no room for a claimed ticket ahead of the slot")
	}
	if p.HasRoom("l", slots.Claimed) {
		t.Error("room for a second claimed ticket with one slot")
	}
	if !p.HasRoom("l", slots.Wait) {
		t.Error("no room for a waiting ticket beside one claimed")
	}
	p.Take("l", slots.Wait)
	if p.HasRoom("l", slots.Wait) {
		t.Errorf("room beyond %d queued per slot", slots.PreparedPerSlot)
	}
	if !p.HasRoom("l", slots.Late) {
		t.Error("no room for a late ticket")
	}
}

// TestPool_Ready: a queued ticket is ready when a slot is left for it once
// every ticket ahead of it has taken one, whether those have asked yet or
// not; a ticket holding a slot is ready.
func TestPool_Ready(t *testing.T) {
	p := slots.New(2, limits(2), nop)
	a, b := p.Take("l", slots.Claimed), p.Take("l", slots.Claimed)
	if !p.Ready(a) || !p.Ready(b) {
		t.Fatalf("two slots, two tickets: Ready = %v %v, want both", p.Ready(a), p.Ready(b))
	}
	if err := p.Acquire(context.Background(), a, nil); err != nil {
		t.Fatal(err)
	}
	one := slots.New(1, limits(1), nop)
	x := one.Take("l", slots.Claimed)
	if err := one.Acquire(context.Background(), x, nil); err != nil {
		t.Fatal(err)
	}
	y := one.Take("m", slots.Claimed)
	if !one.Ready(x) || one.Ready(y) {
		t.Errorf("one slot, taken: Ready = %v %v, want true false", one.Ready(x), one.Ready(y))
	}
	one.Release(x)
	one.Done(x)
	if !one.Ready(y) {
		t.Errorf("the slot freed: the ticket waiting for it is not ready")
	}
	perList := slots.New(2, limits(1), nop)
	l1, m1 := perList.Take("l", slots.Claimed), perList.Take("m", slots.Claimed)
	if err := perList.Acquire(context.Background(), l1, nil); err != nil {
		t.Fatal(err)
	}
	l2 := perList.Take("l", slots.Claimed)
	if !perList.Ready(m1) || perList.Ready(l2) {
		t.Errorf("a list limit of 1: Ready = %v %v, want true false", perList.Ready(m1), perList.Ready(l2))
	}
}
