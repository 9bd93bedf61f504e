package remote

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Streams is the coordinator's hold on the streams of a prefix: only the
// coordinator (or an administrator) makes them and their consumers, and
// it makes them again whenever they are found missing — after a server
// came back with an empty store, say. Workers only bind to what it made.
// Safe for concurrent use.
type Streams struct {
	*Client
	ackWait time.Duration

	mu        sync.Mutex
	work      jetstream.Stream
	runs      jetstream.Stream
	gen       int             // how many times a stream had to be made
	madeAt    time.Time       // when a stream was last made (this machine's clock)
	sureAt    time.Time       // since when the streams are known to be there; zero: not since the last reconnection
	runsSince time.Time       // when the runs stream was made (the server's clock)
	consumers map[string]bool // the work consumers made, by name
	labels    map[string][]string
	profiles  map[string]string
}

func newStreams(c *Client, ackWait time.Duration) *Streams {
	return &Streams{Client: c, ackWait: ackWait, consumers: map[string]bool{}, labels: map[string][]string{}, profiles: map[string]string{}}
}

// poolMaxAge is how long the pool bucket keeps a heartbeat that is not
// renewed: a worker gone for a day leaves the list of workers.
const poolMaxAge = 24 * time.Hour

func (s *Streams) configs() []jetstream.StreamConfig {
	p := s.Prefix
	return []jetstream.StreamConfig{{
		Name: workStream(p), Subjects: []string{p + ".work.>"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		Duplicates: dedupWindow, MaxMsgSize: 8 << 20, AllowDirect: true,
		Description: "taskd: attempts waiting for a worker",
	}, {
		Name: runsStream(p), Subjects: []string{p + ".run.>"},
		Retention: jetstream.LimitsPolicy, Storage: jetstream.FileStorage,
		Duplicates: dedupWindow, MaxAge: RunsMaxAge, MaxMsgSize: 1 << 20, AllowDirect: true,
		Description: "taskd: what workers report of their attempts",
	}, {
		// A key-value bucket, as NATS makes them: the heartbeats of the
		// workers and the coordinator's lock.
		Name: "KV_" + poolBucket(p), Subjects: []string{"$KV." + poolBucket(p) + ".>"},
		Retention: jetstream.LimitsPolicy, Storage: jetstream.FileStorage, MaxMsgsPerSubject: 1,
		Discard: jetstream.DiscardNew, AllowDirect: true, AllowRollup: true, DenyDelete: true,
		Duplicates: 2 * time.Minute, MaxAge: poolMaxAge, MaxMsgSize: 64 << 10,
		Description: "taskd: the workers' heartbeats and the coordinator's lock",
	}}
}

// Ensure makes the streams that are missing, and the work consumers made
// before, and reports whether it had to make a stream. A stream that
// exists is used as it is: its settings are the operator's to change,
// except that direct reads are turned on where they are off (workers read
// through them).
func (s *Streams) Ensure(ctx context.Context) (made bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 2*requestTimeout)
	defer cancel()
	for _, cfg := range s.configs() {
		st, created, err := s.ensureStream(ctx, cfg)
		if err != nil {
			return made, s.Conn.Explain(err)
		}
		made = made || created
		s.mu.Lock()
		switch cfg.Name {
		case workStream(s.Prefix):
			s.work = st
		case runsStream(s.Prefix):
			s.runs, s.runsSince = st, st.CachedInfo().Created
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	if made {
		s.gen++
		s.madeAt = time.Now()
		clear(s.consumers)
	}
	if s.sureAt.IsZero() {
		s.sureAt = time.Now()
	}
	names := make([]string, 0, len(s.profiles))
	for name := range s.profiles {
		names = append(names, name)
	}
	s.mu.Unlock()
	for _, name := range names {
		s.mu.Lock()
		profile, labels := s.profiles[name], s.labels[name]
		s.mu.Unlock()
		if err := s.checkConsumer(ctx, profile, labels); err != nil {
			return made, err
		}
	}
	return made, nil
}

func (s *Streams) ensureStream(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, bool, error) {
	st, err := s.JS.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		st, err = s.JS.CreateStream(ctx, cfg)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			st, err = s.JS.Stream(ctx, cfg.Name)
		} else if err == nil {
			return st, true, nil
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("stream %s: %w", cfg.Name, err)
	}
	if c := st.CachedInfo().Config; !c.AllowDirect {
		c.AllowDirect = true
		if st, err = s.JS.UpdateStream(ctx, c); err != nil {
			return nil, false, fmt.Errorf("turn on direct reads of stream %s: %w", cfg.Name, err)
		}
	}
	return st, false, nil
}

// Gen counts the times a stream had to be made again: when it changes,
// what the streams held may be lost.
func (s *Streams) Gen() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// unsure records that the connection was made again: until Ensure has
// found the streams there, the workers cannot be heard.
func (s *Streams) unsure() {
	s.mu.Lock()
	s.sureAt = time.Time{}
	s.mu.Unlock()
}

// SureSince is since when the streams are known to be there (since the
// last reconnection); zero while they are not.
func (s *Streams) SureSince() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sureAt
}

// MadeAt is when a stream was last made: what the streams held may be
// lost since.
func (s *Streams) MadeAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.madeAt
}

// runsCreated is when the runs stream was made, as the server says.
func (s *Streams) runsCreated() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runsSince
}

// EnsureConsumer makes the work consumer of profile and labels unless it
// was found or made already (since the streams were last made).
func (s *Streams) EnsureConsumer(ctx context.Context, profile string, labels []string) error {
	name := WorkConsumer(profile, labels)
	s.mu.Lock()
	done := s.consumers[name]
	s.mu.Unlock()
	if done {
		return nil
	}
	return s.checkConsumer(ctx, profile, labels)
}

// checkConsumer makes the consumer of profile and labels if it is missing
// (or filters other subjects: an older taskd's). One that exists is used
// as it is: an administrator may have made it.
func (s *Streams) checkConsumer(ctx context.Context, profile string, labels []string) error {
	name := WorkConsumer(profile, labels)
	cons, err := s.JS.Consumer(ctx, workStream(s.Prefix), name)
	if err == nil && cons.CachedInfo().Config.FilterSubject == WorkFilter(s.Prefix, profile, labels) {
		s.mu.Lock()
		s.consumers[name] = true
		s.profiles[name], s.labels[name] = profile, labels
		s.mu.Unlock()
		return nil
	}
	if err == nil {
		return s.makeConsumer(ctx, profile, labels)
	}
	if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return s.Conn.Explain(fmt.Errorf("consumer %s: %w", name, err))
	}
	return s.makeConsumer(ctx, profile, labels)
}

func (s *Streams) makeConsumer(ctx context.Context, profile string, labels []string) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	name := WorkConsumer(profile, labels)
	_, err := s.JS.CreateOrUpdateConsumer(ctx, workStream(s.Prefix), jetstream.ConsumerConfig{
		Durable:       name,
		FilterSubject: WorkFilter(s.Prefix, profile, labels),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       s.ackWait,
		MaxDeliver:    -1,
		MaxAckPending: -1,
		Description:   "taskd: the attempts of profile " + profile + " for workers with labels " + LabelsToken(labels),
	})
	if err != nil {
		return s.Conn.Explain(fmt.Errorf("make consumer %s: %w", name, err))
	}
	s.mu.Lock()
	s.consumers[name] = true
	s.profiles[name], s.labels[name] = profile, labels
	s.mu.Unlock()
	return nil
}

// WorkQueued reports whether the work stream still holds the attempt
// published on subject: no worker has claimed it yet.
func (s *Streams) WorkQueued(ctx context.Context, subject string) (bool, error) {
	m, err := s.lastOf(ctx, workStream(s.Prefix), subject)
	return m != nil, err
}

// DropWork removes the attempt published on subject from the work stream,
// if it is still there: a cancelled attempt no worker has claimed.
func (s *Streams) DropWork(ctx context.Context, subject string) error {
	m, err := s.lastOf(ctx, workStream(s.Prefix), subject)
	if err != nil || m == nil {
		return err
	}
	seq, err := strconv.ParseUint(m.Header.Get("Nats-Sequence"), 10, 64)
	if err != nil {
		return fmt.Errorf("the work of %s has no sequence", subject)
	}
	s.mu.Lock()
	work := s.work
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	err = work.DeleteMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	return s.Conn.Explain(err)
}

// Forget removes what the runs stream holds of attempt id.
func (s *Streams) Forget(ctx context.Context, id string) error {
	s.mu.Lock()
	runs := s.runs
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	return s.Conn.Explain(runs.Purge(ctx, jetstream.WithPurgeSubject(s.Prefix+".run."+id+".>")))
}
