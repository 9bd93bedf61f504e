package worker

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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

// keptEnds is how many of the last Ends a worker keeps, to send them
// again if the server loses its store.
const keptEnds = 256

// A keptEnd is the End of an attempt that ended here, as it was stored.
type keptEnd struct {
	id   string
	data []byte
}

// keepEnd keeps the End of attempt id, data, stored.
func (w *Worker) keepEnd(id string, data []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ends = append(w.ends, keptEnd{id, data})
	if len(w.ends) > keptEnds {
		w.ends = slices.Clone(w.ends[len(w.ends)-keptEnds:])
	}
}

// resendEnds sends the Ends kept again, and reports whether the server
// took them all. Each goes with a claim, which the new store lacks too;
// an attempt someone has claimed in the new store is left alone. An End
// its coordinator recorded before the loss lands in the runs stream
// where nobody reads it, and goes with the stream's age limit.
func (w *Worker) resendEnds(ctx context.Context) bool {
	w.mu.Lock()
	ends := slices.Clone(w.ends)
	w.mu.Unlock()
	for _, e := range ends {
		if err := w.resendOne(ctx, e); err != nil {
			w.log.Debug("cannot send an attempt's end again yet", "remote", e.id, "err", err)
			return false
		}
	}
	return true
}

// resendEnd sends the End of attempt id again, if it is kept.
func (w *Worker) resendEnd(ctx context.Context, id string) {
	w.mu.Lock()
	i := slices.IndexFunc(w.ends, func(e keptEnd) bool { return e.id == id })
	var e keptEnd
	if i >= 0 {
		e = w.ends[i]
	}
	w.mu.Unlock()
	if i < 0 {
		return
	}
	if err := w.resendOne(ctx, e); err != nil {
		w.log.Debug("cannot send an attempt's end again", "remote", id, "err", err)
	}
}

func (w *Worker) resendOne(ctx context.Context, e keptEnd) error {
	st, _ := json.Marshal(remote.Start{Worker: w.cfg.Name, Boot: w.boot, Seq: w.hbSeq.Load(), Host: w.host, At: time.Now().UTC()})
	claim := &nats.Msg{Subject: remote.RunSubject(w.c.Prefix, e.id, remote.KindStart), Data: st}
	_, err := w.c.PublishMsg(ctx, claim, jetstream.WithExpectLastSequencePerSubject(0))
	if remote.WrongLastSeq(err) {
		return nil // the store has its claim, or another's
	}
	if err != nil {
		return err
	}
	if _, err := w.c.Publish(ctx, e.id, remote.KindEnd, remote.Message{Data: e.data, ID: e.id + ".end"}); err != nil {
		return err
	}
	w.log.Info("sent an attempt's end again", "remote", e.id)
	return nil
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
