package worker

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/taskd/taskd/daemon/remote"
)

// beat publishes the worker's heartbeat at once and then every interval,
// until ctx ends; every heartbeat also looks for cancels the
// subscription missed (sent while the worker was away).
func (w *Worker) beat(ctx context.Context) {
	t := time.NewTicker(w.cfg.Heartbeat)
	defer t.Stop()
	failed := false
	for {
		if err := w.publishBeat(ctx, false); err != nil {
			switch {
			case ctx.Err() != nil:
			case !failed:
				w.log.Warn("cannot publish the heartbeat yet", "err", err)
			default:
				w.log.Debug("cannot publish the heartbeat", "err", err)
			}
			failed = true
		} else {
			if failed {
				w.log.Info("publishing the heartbeat again")
			}
			failed = false
		}
		w.lookForCancels(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// lastBeat publishes the heartbeat that says the worker has stopped: its
// coordinators need not wait for a silence to know.
func (w *Worker) lastBeat() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := w.publishBeat(ctx, true); err != nil {
		w.log.Debug("publish the last heartbeat", "err", err)
	}
}

func (w *Worker) publishBeat(ctx context.Context, stopped bool) error {
	seq := w.hbSeq.Load() + 1
	hb := remote.Heartbeat{
		Name: w.cfg.Name, Host: w.host, Version: w.cfg.Version, Boot: w.boot, Seq: seq,
		Interval: remote.Duration(w.cfg.Heartbeat), Profiles: w.cfg.Profiles, Labels: w.cfg.Labels,
		Slots: w.cfg.Concurrency, Attempts: w.holding(), Draining: w.draining.Load(), Stopped: stopped,
		At: time.Now().UTC(),
	}
	data, _ := json.Marshal(hb)
	m := &nats.Msg{Subject: remote.HeartbeatSubject(w.c.Prefix, w.c.Signer.PublicKey()), Data: data}
	if _, err := w.c.PublishMsg(ctx, m); err != nil {
		return err
	}
	w.hbSeq.Store(seq)
	return nil
}

// holding lists the attempts the worker holds, oldest first.
func (w *Worker) holding() []remote.HeldAttempt {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]remote.HeldAttempt, 0, len(w.running))
	for _, r := range w.running {
		out = append(out, r.held())
	}
	slices.SortFunc(out, func(a, b remote.HeldAttempt) int { return a.Since.Compare(b.Since) })
	return out
}

// held is how many attempts the worker holds.
func (w *Worker) held() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.running)
}

// lookForCancels asks the runs stream for a cancel of every attempt that
// runs here: one sent while the worker could not hear it.
func (w *Worker) lookForCancels(ctx context.Context) {
	w.mu.Lock()
	runs := make(map[string]*run, len(w.running))
	for id, r := range w.running {
		runs[id] = r
	}
	w.mu.Unlock()
	for id, r := range runs {
		m, err := w.c.Last(ctx, id, remote.KindCancel)
		if err != nil || m == nil {
			continue
		}
		w.cancelled(r, id, m.Subject, m.Header, m.Data)
	}
}
