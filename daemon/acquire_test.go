package daemon

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestAcquireSlot_DaemonStopping: when the daemon stops, its jobs learn of
// it one after another. A job whose agent was stopped first gives its slot
// to a job waiting for one that has not been told yet; that job must not
// start its agent, and the slot must not stay held.
func TestAcquireSlot_DaemonStopping(t *testing.T) {
	run, stopDaemon := context.WithCancelCause(context.Background())
	l := &list{id: "l"}
	d := &Daemon{cfg: &Config{Concurrency: 1}, ctx: run, listSlots: map[string]*listSlots{}}
	l.slots = d.serveSlots(l.id)
	holder := &job{l: l, id: "1", prep: prepWait, granted: make(chan struct{})}
	waiter := &job{l: l, id: "2", prep: prepClaimed, granted: make(chan struct{})}
	for _, j := range []*job{holder, waiter} {
		if !d.takeRoom(j) {
			t.Fatalf("no room for job %s", j.id)
		}
	}
	acquired := make(chan error, 1)
	go func() { acquired <- d.acquireSlot(context.Background(), waiter) }() // not told of the stop
	stopDaemon(errInterrupted)
	d.releaseSlot(holder) // its agent, stopped, exited

	select {
	case err := <-acquired:
		if !errors.Is(err, errInterrupted) {
			t.Errorf("acquireSlot during the daemon's stop = %v, want %v", err, errInterrupted)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("acquireSlot did not return within 10s of the slot's release")
	}
	d.slotMu.Lock()
	defer d.slotMu.Unlock()
	if d.running != 0 || waiter.slot || d.pending != 0 || len(d.queue) != 0 {
		t.Errorf("after the stop: running %d, waiter holds a slot %v, pending %d, queue %d; want 0, false, 0, 0",
			d.running, waiter.slot, d.pending, len(d.queue))
	}
}
