package daemon

import (
	"context"
	"runtime"
	"slices"
)

// Concurrency slots change hands without the loop. The loop decides which
// tasks start and counts them (schedule, finished), but a slot given back
// by an agent that exited goes straight to the first job waiting for one,
// in the exiting job's goroutine: a round trip through the loop, which may
// be busy reading the files of a burst of events, would leave the slot
// idle for as long. The loop is kicked too, so that it prepares the next
// job ahead of the next free slot.
//
// Every count and queue here is guarded by Daemon.slotMu, which is held
// only while counting, never across I/O.

// acquireSlot waits until job j holds a concurrency slot, or ctx ends. A job
// that took its slot when it started returns at once.
func (d *Daemon) acquireSlot(ctx context.Context, j *job) error {
	if !j.prefetched {
		return nil
	}
	select {
	case <-j.granted:
		return nil // already has it
	default:
	}
	d.slotMu.Lock()
	if !slices.Contains(d.queue, j) {
		d.queue = append(d.queue, j)
	}
	d.grant()
	d.slotMu.Unlock()
	select {
	case <-j.granted:
		d.kickLoop() // one job fewer waits ahead of a slot: prefetch another
		// Granted as the job was stopped: start nothing; the job gives
		// the slot back as it ends.
		return context.Cause(ctx)
	case <-ctx.Done():
		// Still queued, or granted meanwhile: finished() settles either.
		return context.Cause(ctx)
	}
}

// releaseSlot gives job j's concurrency slot back, its agent having exited,
// and hands it to the first job waiting for one. The task keeps its job
// (nothing else starts for it) until the job ends. Called by j's goroutine.
func (d *Daemon) releaseSlot(j *job) {
	d.slotMu.Lock()
	if !j.slot {
		d.slotMu.Unlock()
		return
	}
	j.slot, j.finishing = false, true
	j.l.running--
	d.running--
	d.finishing++
	// The loop is woken before the slot is granted: a goroutine woken by
	// this one runs next on this processor, and the last one woken goes
	// first. The job given the slot starts its agent; the loop, which
	// prepares the job after it, follows.
	d.kickLoop()
	granted := d.grant()
	d.slotMu.Unlock()
	if granted {
		// Let that job start its agent before this one records its end.
		runtime.Gosched()
	}
}

// grant gives free slots to the jobs waiting for one, in the order they
// asked, and reports whether it gave any. The caller holds d.slotMu.
func (d *Daemon) grant() bool {
	granted := false
	for i := 0; i < len(d.queue) && d.running < d.cfg.Concurrency; {
		j := d.queue[i]
		if j.l.running >= d.listLimit(j.l.id) {
			i++
			continue
		}
		d.queue = slices.Delete(d.queue, i, i+1)
		j.pending, j.slot = false, true
		j.l.pending--
		d.pending--
		j.l.running++
		d.running++
		close(j.granted)
		granted = true
	}
	return granted
}

// kickLoop asks the loop to schedule again, without waiting for it.
func (d *Daemon) kickLoop() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}
