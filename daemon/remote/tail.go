package remote

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// tail delivers the messages of attempt id's run subjects in order, from
// the first, until ctx ends. When its consumer is lost (the server
// restarted, the connection broke for long) it starts again after the
// last message delivered — or from the first, when the runs stream was
// made again meanwhile (its sequence numbers start over): what is
// delivered twice is harmless (output lands at its offset, one End ends
// the attempt).
func (s *Streams) tail(ctx context.Context, id string, log interface{ Debug(string, ...any) }) <-chan jetstream.Msg {
	ch := make(chan jetstream.Msg)
	go func() {
		var last uint64
		since := s.runsCreated()
		gen := s.Gen()
		for ctx.Err() == nil {
			if c := s.runsCreated(); !c.Equal(since) || s.Gen() != gen {
				last, since, gen = 0, c, s.Gen()
			}
			cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{s.Prefix + ".run." + id + ".>"}}
			if last > 0 {
				cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, last+1
			}
			err := s.tailOnce(ctx, cfg, ch, &last)
			if ctx.Err() == nil {
				log.Debug("following an attempt again", "attempt", id, "err", err)
				sleep(ctx, 500*time.Millisecond)
			}
		}
	}()
	return ch
}

func (s *Streams) tailOnce(ctx context.Context, cfg jetstream.OrderedConsumerConfig, ch chan<- jetstream.Msg, last *uint64) error {
	return s.consume(ctx, runsStream(s.Prefix), cfg, func(m jetstream.Msg) bool {
		if md, err := m.Metadata(); err == nil {
			*last = md.Sequence.Stream
		}
		select {
		case ch <- m:
			return true
		case <-ctx.Done():
			return false
		}
	})
}

// consume hands each message of an ordered consumer of stream to each,
// until each returns false, ctx ends or the consumer fails (its error is
// returned). A consumer of a stream that was made again would go on at
// its old sequence, past what the new stream holds: it stops then, for
// its caller to start again.
func (s *Streams) consume(ctx context.Context, stream string, cfg jetstream.OrderedConsumerConfig, each func(jetstream.Msg) bool) error {
	ctx, stopRemade := s.untilRemade(ctx)
	defer stopRemade()
	cfg.MaxResetAttempts, cfg.InactiveThreshold = 2, time.Minute
	cctx, cancel := context.WithTimeout(ctx, requestTimeout)
	cons, err := s.JS.OrderedConsumer(cctx, stream, cfg)
	cancel()
	if err != nil {
		return err
	}
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	// Next ends with ctx. The iterator is stopped only here, once Next
	// has returned: the client's ordered iterator swaps its consumer in
	// Next without the lock its Stop takes, so a Stop from another
	// goroutine would race with it.
	defer func() {
		it.Stop()
		// Else the server would keep the consumer until its inactive
		// threshold: one for every attempt followed.
		if info := cons.CachedInfo(); info != nil {
			go s.deleteConsumer(stream, info.Name)
		}
	}()
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return err
		}
		if !each(m) {
			return ctx.Err()
		}
	}
}

// untilRemade returns a context that ends with ctx, or when the streams
// are made again.
func (s *Streams) untilRemade(ctx context.Context) (context.Context, context.CancelFunc) {
	gen := s.Gen()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if s.Gen() != gen {
					cancel()
					return
				}
			}
		}
	}()
	return ctx, cancel
}

// sleep waits for d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// deleteConsumer deletes the consumer called name of stream, that nothing
// reads any more.
func (s *Streams) deleteConsumer(stream, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	// One it cannot delete goes at its inactive threshold.
	_ = s.JS.DeleteConsumer(ctx, stream, name)
}
