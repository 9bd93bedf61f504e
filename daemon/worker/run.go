package worker

import (
	"context"
	"sync"
	"time"

	"github.com/taskd/taskd/daemon/remote"
)

// A run is an attempt being handled here, from its claim until its End is
// stored: what the heartbeat says of it, and how to stop its agent. Safe
// for concurrent use.
type run struct {
	mu     sync.Mutex // protects the fields below
	wk     remote.Work
	state  string // "preparing", "running" or "ending"
	since  time.Time
	stop   context.CancelCauseFunc
	cause  error // why it was stopped, before it could be
	ending bool
}

// register records that attempt wk is handled here; ok is false if it
// already is.
func (w *Worker) register(wk remote.Work) (r *run, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running[wk.ID] != nil {
		return nil, false
	}
	r = &run{wk: wk, state: "preparing", since: time.Now().UTC()}
	w.running[wk.ID] = r
	return r, true
}

// unregister records that attempt id is no longer handled here; ended
// says it ended here (its End is stored).
func (w *Worker) unregister(id string, ended bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.running, id)
	if ended {
		w.ended = append(w.ended, id)
		if len(w.ended) > 4096 {
			w.ended = w.ended[len(w.ended)-4096:]
		}
	}
}

// endedHere reports whether attempt id ended here lately.
func (w *Worker) endedHere(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.ended {
		if e == id {
			return true
		}
	}
	return false
}

func (r *run) held() remote.HeldAttempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return remote.HeldAttempt{ID: r.wk.ID, List: r.wk.List, Task: r.wk.Task, N: r.wk.N, Profile: r.wk.Profile, State: r.state, Since: r.since}
}

func (r *run) setState(s string) {
	r.mu.Lock()
	r.state = s
	r.mu.Unlock()
}

// setStop records how to stop the run's agent; if it was asked to stop
// before, it stops at once.
func (r *run) setStop(stop context.CancelCauseFunc) {
	r.mu.Lock()
	r.stop = stop
	cause := r.cause
	r.mu.Unlock()
	if cause != nil {
		stop(cause)
	}
}

// cancel stops the run's agent with cause (or keeps it from starting),
// and reports whether it was news.
func (r *run) cancel(cause error) bool {
	r.mu.Lock()
	stop, first := r.stop, r.cause == nil && !r.ending
	if first {
		r.cause = cause
	}
	r.mu.Unlock()
	if first && stop != nil {
		stop(cause)
	}
	return first
}

// stopCause is why the run was asked to stop, if it was.
func (r *run) stopCause() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cause
}

// setEnding records that the run's End is being published.
func (r *run) setEnding() {
	r.mu.Lock()
	r.ending, r.state = true, "ending"
	r.mu.Unlock()
}
