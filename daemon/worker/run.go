package worker

import (
	"context"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// A run is an attempt being handled here: its deliveries (one, or more
// when the server delivered it again while it ran) and how to stop its
// agent. Safe for concurrent use.
type run struct {
	mu     sync.Mutex // protects the fields below
	msgs   []jetstream.Msg
	stop   context.CancelCauseFunc
	ending bool // its End is being published
}

// register records that attempt id, delivered as m, is handled here. If it
// already is, m joins that run and adopted is true.
func (w *Worker) register(id string, m jetstream.Msg) (r *run, adopted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r := w.running[id]; r != nil {
		r.mu.Lock()
		r.msgs = append(r.msgs, m)
		r.mu.Unlock()
		return r, true
	}
	r = &run{msgs: []jetstream.Msg{m}}
	w.running[id] = r
	return r, false
}

func (w *Worker) unregister(id string) {
	w.mu.Lock()
	delete(w.running, id)
	w.mu.Unlock()
}

// each calls f with every delivery of the run.
func (r *run) each(f func(jetstream.Msg)) {
	r.mu.Lock()
	msgs := append([]jetstream.Msg(nil), r.msgs...)
	r.mu.Unlock()
	for _, m := range msgs {
		f(m)
	}
}

func (r *run) setStop(stop context.CancelCauseFunc) {
	r.mu.Lock()
	r.stop = stop
	r.mu.Unlock()
}

// cancel stops the run's agent with cause, if it has started.
func (r *run) cancel(cause error) {
	r.mu.Lock()
	stop := r.stop
	r.mu.Unlock()
	if stop != nil {
		stop(cause)
	}
}

// setEnding records that the run's End is being published.
func (r *run) setEnding() {
	r.mu.Lock()
	r.ending = true
	r.mu.Unlock()
}

func (r *run) isEnding() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ending
}
