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
	log       interface {
		Debug(string, ...any)
		Warn(string, ...any)
	}

	mu      sync.Mutex
	workers map[string]*seenWorker // by key
}

// seenWorker is what was seen under a key: the heartbeats of each of its
// boots (processes), the oldest first. One key is one worker, restarted
// now and then; two processes that publish under one key at once are
// two workers given the same key, each judged by its own heartbeats.
type seenWorker struct {
	boots  []*seenBoot
	warned time.Time // when two live boots were last logged
}

// seenBoot is the latest heartbeat of one boot and when this machine saw
// it, and when it saw the boot's first.
type seenBoot struct {
	hb    Heartbeat
	at    time.Time // when this heartbeat (its boot and seq) was first seen here
	first time.Time // when the boot was first seen here
}

func (w *seenWorker) boot(boot string) *seenBoot {
	for _, b := range w.boots {
		if b.hb.Boot == boot {
			return b
		}
	}
	return nil
}

// replacedBy returns the boot of the key first seen after b that b has not
// been heard since, for longer than two of b's heartbeat intervals: a
// new process took b's place (a worker restarted). Nil while b may
// still be speaking: another process that shares its key.
func (w *seenWorker) replacedBy(b *seenBoot, now time.Time) *seenBoot {
	wait := 2 * time.Duration(b.hb.Interval)
	if wait <= 0 {
		wait = 10 * time.Second // twice the default interval
	}
	for _, n := range w.boots {
		if n != b && n.first.After(b.first) && !b.at.After(n.first) && now.Sub(n.first) > wait {
			return n
		}
	}
	return nil
}

func newPool(s *Streams, trust Trust, lostAfter time.Duration, log interface {
	Debug(string, ...any)
	Warn(string, ...any)
}) *pool {
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
	now := time.Now()
	w.boots = slices.DeleteFunc(w.boots, func(o *seenBoot) bool { return now.Sub(o.at) > poolMaxAge })
	b := w.boot(hb.Boot)
	if b == nil {
		b = &seenBoot{first: now}
		w.boots = append(w.boots, b)
	} else if hb.Seq <= b.hb.Seq {
		return // delivered again
	}
	b.hb, b.at = hb, now
	p.sharedKey(key, w, b, now)
}

// sharedKey logs, once a minute, that boot b of key spoke after another
// process took the key: two workers publish under one key.
func (p *pool) sharedKey(key string, w *seenWorker, b *seenBoot, now time.Time) {
	if now.Sub(w.warned) < time.Minute {
		return
	}
	for _, o := range w.boots {
		if o != b && o.first.After(b.first) && !o.hb.Stopped && now.Sub(o.at) < p.lostAfter {
			w.warned = now
			p.log.Warn("two workers publish heartbeats under one key: give each its own key (taskd keygen) and restart them",
				"key", key, "worker", b.hb.Name, "host", b.hb.Host, "other", o.hb.Name, "otherHost", o.hb.Host)
			return
		}
	}
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
	since := p.s.Conn.ConnectedSince()
	if !p.s.Conn.IsConnected() || since.IsZero() || sure.IsZero() {
		return alive, "" // the workers cannot be heard now
	}
	now := time.Now()
	base := latest(h.At, since, p.s.MadeAt(), sure)
	p.mu.Lock()
	defer p.mu.Unlock()
	name := h.Worker
	if w := p.workers[h.Key]; w != nil {
		if b := w.boot(h.Boot); b != nil {
			if w.replacedBy(b, now) != nil {
				return lost, fmt.Sprintf("worker %s restarted (its agents were stopped)", name)
			}
			base = latest(base, b.at)
			if b.hb.Stopped && !b.hb.Holds(id) {
				return lost, fmt.Sprintf("worker %s stopped", name)
			}
			if b.hb.Seq > h.Seq+1 && !b.hb.Holds(id) {
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
		for _, b := range w.boots {
			if b.hb.Holds(id) && b.at.After(made) && !b.hb.Stopped {
				return holding{Key: key, Boot: b.hb.Boot, Worker: b.hb.Name, Seq: b.hb.Seq, At: time.Now()}, true
			}
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
	since := p.s.Conn.ConnectedSince()
	return p.s.Conn.IsConnected() && !since.IsZero() && !sure.IsZero() && time.Since(latest(since, p.s.MadeAt(), sure)) > p.lostAfter
}

// why says why an attempt of profile that asks for labels waits in the
// queue: no live worker serves the profile, none has the labels, or all
// that could are busy or draining.
func (p *pool) why(profile string, labels []string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var serving, able, free []string
	now := time.Now()
	for _, w := range p.workers {
		for _, b := range w.boots {
			hb := b.hb
			if hb.Stopped || now.Sub(b.at) > p.lostAfter || w.replacedBy(b, now) != nil || !slices.Contains(hb.Profiles, profile) {
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
