package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A pool is the coordinator's view of the workers: the heartbeats they
// publish in the pool bucket, each signed by its worker's key, and when
// this machine saw each new one. A worker's liveness is its heartbeat,
// judged only while the coordinator is connected: time the coordinator
// spends away from the server (an outage) counts against no worker.
// Safe for concurrent use.
type pool struct {
	s         *Streams
	trust     Trust
	lostAfter time.Duration
	log       interface{ Debug(string, ...any) }

	mu      sync.Mutex
	workers map[string]*seenWorker // by key
}

// seenWorker is a worker's latest heartbeat and when it was seen.
type seenWorker struct {
	hb    Heartbeat
	at    time.Time // when this heartbeat (its boot and seq) was first seen here
	boots []string  // the boots seen, oldest first
}

func newPool(s *Streams, trust Trust, lostAfter time.Duration, log interface{ Debug(string, ...any) }) *pool {
	return &pool{s: s, trust: trust, lostAfter: lostAfter, log: log, workers: map[string]*seenWorker{}}
}

// run follows the heartbeats until ctx ends, starting again whenever its
// consumer is lost.
func (p *pool) run(ctx context.Context) {
	for ctx.Err() == nil {
		err := p.watch(ctx)
		if ctx.Err() == nil {
			p.log.Debug("following the workers' heartbeats again", "err", err)
			sleep(ctx, 500*time.Millisecond)
		}
	}
}

func (p *pool) watch(ctx context.Context) error {
	return p.s.consume(ctx, "KV_"+poolBucket(p.s.Prefix), jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{"$KV." + poolBucket(p.s.Prefix) + ".workers.>"},
		DeliverPolicy:  jetstream.DeliverLastPerSubjectPolicy,
	}, func(m jetstream.Msg) bool {
		p.take(m.Subject(), m.Headers(), m.Data())
		return true
	})
}

// take records a heartbeat published on subject, if its key signed it.
func (p *pool) take(subject string, hdr nats.Header, data []byte) {
	hb, key, err := ReadHeartbeat(p.s.Prefix, subject, hdr, data, p.trust)
	if err != nil {
		p.log.Debug("ignoring a heartbeat", "subject", subject, "err", err)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.workers[key]
	if w == nil {
		w = &seenWorker{}
		p.workers[key] = w
	}
	if w.hb.Boot == hb.Boot && hb.Seq <= w.hb.Seq && !w.at.IsZero() {
		return // delivered again
	}
	if !slices.Contains(w.boots, hb.Boot) {
		w.boots = append(w.boots, hb.Boot)
	}
	w.hb, w.at = hb, time.Now()
}

// ReadHeartbeat checks and reads a heartbeat published on subject of
// prefix p: signed by the key the subject names, a key of trust (any key
// if trust is nil).
func ReadHeartbeat(p, subject string, hdr nats.Header, data []byte, trust Trust) (Heartbeat, string, error) {
	var hb Heartbeat
	key, ok := strings.CutPrefix(subject, "$KV."+poolBucket(p)+".workers.")
	if !ok {
		return hb, "", fmt.Errorf("not a heartbeat's subject")
	}
	t := trust
	if t == nil {
		t = Trust{key: true}
	}
	signer, err := t.Verify(subject, hdr, data)
	if err != nil {
		return hb, key, err
	}
	if signer != key {
		return hb, key, fmt.Errorf("signed by %s, not by the key it is under", signer)
	}
	if err := json.Unmarshal(data, &hb); err != nil {
		return hb, key, err
	}
	return hb, key, nil
}

// A holding is the claim of an attempt by a worker: its key, the boot of
// its process, its heartbeat's sequence at the claim, and when this
// machine learned of it.
type holding struct {
	Key, Boot, Worker string
	Seq               uint64
	At                time.Time
}

// verdict is what the pool says of a holding.
type verdict int

const (
	alive      verdict = iota // the worker holds it, or cannot be judged now
	lost                      // the worker is gone
	notHolding                // the worker is alive and does not list the attempt
)

// judge says whether the worker of h still holds attempt id, and if not
// why. A worker is lost when a newer process took its key's place, when it
// said it stopped, or when this machine has seen no new heartbeat of it for
// lostAfter while connected to the server with its streams there (since
// the connection and the streams were last made, and the streams last
// found after a reconnection).
func (p *pool) judge(h holding, id string) (verdict, string) {
	sure := p.s.SureSince()
	if !p.s.Conn.IsConnected() || sure.IsZero() {
		return alive, "" // the workers cannot be heard now
	}
	now := time.Now()
	base := latest(h.At, p.s.Conn.ConnectedSince(), p.s.MadeAt(), sure)
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.workers[h.Key]
	name := h.Worker
	if w != nil {
		if i, j := slices.Index(w.boots, h.Boot), slices.Index(w.boots, w.hb.Boot); i >= 0 && j > i {
			return lost, fmt.Sprintf("worker %s restarted (its agents were stopped)", name)
		}
		if w.hb.Boot == h.Boot {
			base = latest(base, w.at)
			if w.hb.Stopped && !w.hb.Holds(id) {
				return lost, fmt.Sprintf("worker %s stopped", name)
			}
			if w.hb.Seq > h.Seq+1 && !w.hb.Holds(id) {
				return notHolding, fmt.Sprintf("worker %s no longer holds it", name)
			}
		}
	}
	if silent := now.Sub(base); silent > p.lostAfter {
		return lost, fmt.Sprintf("worker %s stopped answering (no heartbeat for %s)", name, silent.Round(time.Second))
	}
	return alive, ""
}

func latest(ts ...time.Time) time.Time {
	var t time.Time
	for _, x := range ts {
		if x.After(t) {
			t = x
		}
	}
	return t
}

// holder returns the worker whose latest heartbeat lists attempt id, seen
// since the streams were last made, if any.
func (p *pool) holder(id string) (holding, bool) {
	made := p.s.MadeAt()
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, w := range p.workers {
		if w.hb.Holds(id) && w.at.After(made) && !w.hb.Stopped {
			return holding{Key: key, Boot: w.hb.Boot, Worker: w.hb.Name, Seq: w.hb.Seq, At: time.Now()}, true
		}
	}
	return holding{}, false
}

// settled reports whether the pool has been watching long enough since
// the connection and the streams were last made for every live worker to
// have said so: only then may an attempt no worker lists be taken for
// one no worker has.
func (p *pool) settled() bool {
	sure := p.s.SureSince()
	return p.s.Conn.IsConnected() && !sure.IsZero() && time.Since(latest(p.s.Conn.ConnectedSince(), p.s.MadeAt(), sure)) > p.lostAfter
}

// why says why an attempt of profile that asks for labels waits in the
// queue: no live worker serves the profile, none has the labels, or all
// that could are busy or draining.
func (p *pool) why(profile string, labels []string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var serving, able, free []string
	for _, w := range p.workers {
		hb := w.hb
		if hb.Stopped || time.Since(w.at) > p.lostAfter || !slices.Contains(hb.Profiles, profile) {
			continue
		}
		serving = append(serving, hb.Name)
		if !hb.Serves(profile, labels) {
			continue
		}
		able = append(able, hb.Name)
		if !hb.Draining && len(hb.Attempts) < hb.Slots {
			free = append(free, hb.Name)
		}
	}
	sort.Strings(serving)
	sort.Strings(able)
	switch {
	case len(serving) == 0:
		return fmt.Sprintf("queued: no worker that serves profile %q is connected", profile)
	case len(able) == 0:
		return fmt.Sprintf("queued: no worker that serves profile %q has the labels %s (workers of the profile: %s)", profile, strings.Join(labels, ", "), strings.Join(serving, ", "))
	case len(free) == 0:
		return fmt.Sprintf("queued: every worker that can run it is busy or draining (%s)", strings.Join(able, ", "))
	}
	return fmt.Sprintf("queued: no worker that serves profile %q has taken it yet", profile)
}
