package slots_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/taskd/taskd/daemon/slots"
)

// acquire starts t's Acquire and returns its result's channel.
func acquire(p *slots.Pool, t *slots.Ticket) <-chan error {
	c := make(chan error, 1)
	go func() { c <- p.Acquire(context.Background(), t, nil) }()
	return c
}

// TestPool_Priority: a queued ticket of higher priority goes before the
// lower ones of its list queued before it, not before another list's.
func TestPool_Priority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := slots.New(1, limits(1), nop)
		run := p.Take("l", slots.Tag{}, slots.Wait)
		low := p.Take("l", slots.Tag{Priority: 1}, slots.Wait)
		high := p.Take("l", slots.Tag{Priority: 5}, slots.Wait)
		lowDone, highDone := acquire(p, low), acquire(p, high)
		synctest.Wait()
		p.Release(run)
		synctest.Wait()
		if !p.Holds(high) || p.Holds(low) {
			t.Fatalf("after the release: high holds %v, low %v", p.Holds(high), p.Holds(low))
		}
		<-highDone
		p.Release(high)
		synctest.Wait()
		if err := <-lowDone; err != nil || !p.Holds(low) {
			t.Errorf("low: %v, holds %v", err, p.Holds(low))
		}
	})
}

// TestPool_Bump: a ticket waiting for its slot is taken out of the queue
// by Bump: its Acquire says so, it never gets a slot, and its room goes
// to another; a ticket holding a slot cannot be bumped.
func TestPool_Bump(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := slots.New(1, limits(1), nop)
		run := p.Take("l", slots.Tag{}, slots.Wait)
		prepared := p.Take("l", slots.Tag{}, slots.Claimed)
		if p.HasRoom("l", slots.Tag{Priority: 9}, slots.Claimed) {
			t.Fatal("room for a second claimed ticket")
		}
		if p.Bump(run) {
			t.Error("a ticket holding its slot was bumped")
		}
		got := acquire(p, prepared)
		synctest.Wait()
		if !p.Bump(prepared) {
			t.Fatal("Bump of a queued ticket failed")
		}
		synctest.Wait()
		if err := <-got; !errors.Is(err, slots.ErrBumped) {
			t.Errorf("the bumped ticket's Acquire = %v", err)
		}
		if !p.HasRoom("l", slots.Tag{Priority: 9}, slots.Claimed) {
			t.Error("no room after the bump")
		}
		p.Release(run)
		if p.Holds(prepared) {
			t.Error("the bumped ticket got the slot")
		}
		p.Done(prepared)
		p.Done(run)
		if u := p.Usage(); u != (slots.Usage{}) {
			t.Errorf("after all done: %+v", u)
		}
	})
}

// TestPool_ProfileLimit: a profile's limit holds back its tickets alone:
// another profile's ticket of the same list, queued behind, goes first.
func TestPool_ProfileLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := slots.New(4, limits(4), nop)
		p.SetProfileLimits(func(profile string) int {
			if profile == "slow" {
				return 1
			}
			return 0
		})
		a := p.Take("l", slots.Tag{Profile: "slow"}, slots.Wait)
		b := p.Take("l", slots.Tag{Profile: "slow"}, slots.Wait)
		c := p.Take("l", slots.Tag{Profile: "fast"}, slots.Wait)
		if !p.Holds(a) || p.Holds(b) || !p.Holds(c) {
			t.Fatalf("holds a %v b %v c %v, want true false true", p.Holds(a), p.Holds(b), p.Holds(c))
		}
		got := acquire(p, b)
		p.Release(a)
		synctest.Wait()
		if err := <-got; err != nil || !p.Holds(b) {
			t.Errorf("b after a's release: %v, holds %v", err, p.Holds(b))
		}
	})
}

// TestPool_SetLimit: a lower limit takes no slot back; a freed slot is
// not given again while as many hold one as the limit; a higher limit
// gives the waiting tickets slots at once.
func TestPool_SetLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := slots.New(3, limits(8), nop)
		var held []*slots.Ticket
		for range 3 {
			held = append(held, p.Take("l", slots.Tag{}, slots.Wait))
		}
		next := p.Take("l", slots.Tag{}, slots.Wait)
		got := acquire(p, next)
		p.SetLimit(1)
		for _, h := range held {
			if !p.Holds(h) {
				t.Fatal("a lower limit took a slot back")
			}
		}
		p.Release(held[0])
		p.Release(held[1])
		synctest.Wait()
		if p.Holds(next) {
			t.Fatal("a slot was given while one still ran with a limit of 1")
		}
		p.SetLimit(3)
		synctest.Wait()
		if err := <-got; err != nil || !p.Holds(next) {
			t.Errorf("after the limit rose: %v, holds %v", err, p.Holds(next))
		}
	})
}
