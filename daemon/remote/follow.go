package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskd/taskd/daemon/agent"
)

// queuedNote is how long an attempt may wait for a worker before its task
// says so.
const queuedNote = 10 * time.Second

// How ctx's cause asks an attempt to stop.
const (
	kindStopNone      = iota
	kindStopInterrupt // the daemon stops (or the list is refused): leave it running
	kindStopCancel    // the task was cancelled or removed: stop it on its worker
)

func stopOf(ctx context.Context) int {
	switch cause := context.Cause(ctx); {
	case cause == nil:
		return kindStopNone
	case errors.Is(cause, agent.ErrInterrupted):
		return kindStopInterrupt
	}
	return kindStopCancel
}

// await follows attempt id from what its run subjects hold, from the first
// message: it records the worker and its cmd.json, writes the output into
// the logs, calls gate (nil at recovery) when the agent starts and exits,
// and returns the End. When ctx ends because the daemon stops, the
// attempt is left to its worker (detached); when the task was cancelled,
// the worker is asked to stop the agent, and its End is awaited for the
// grace period and a little more.
func (c *Coordinator) await(ctx context.Context, gate agent.Gate, f *folder, id string, n *note) (agent.Result, agent.Outcome) {
	s := c.streams
	tctx, stopTail := context.WithCancel(context.WithoutCancel(ctx))
	defer stopTail()
	msgs := s.tail(tctx, id, c.log)
	queued := time.Now()
	seenStart, started := false, false
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	stopping := ctx.Done()
	var cancelSent bool
	var giveUp <-chan time.Time
	for {
		select {
		case m := <-msgs:
			kind := m.Subject()[strings.LastIndexByte(m.Subject(), '.')+1:]
			switch kind {
			case KindStart:
				var st Start
				if json.Unmarshal(m.Data(), &st) == nil {
					seenStart = true
					n.clear()
					_ = f.updateRemote("worker", st.Worker)
				}
			case KindStarted:
				var st Started
				if json.Unmarshal(m.Data(), &st) != nil {
					continue
				}
				seenStart = true
				c.recordStarted(f, st)
				if !started {
					started = true
					if gate != nil {
						gate.Started(st.At)
					}
				}
			case KindOut, KindErr:
				off, err := strconv.ParseInt(m.Headers().Get(OffsetHeader), 10, 64)
				if err == nil && off >= 0 {
					if err := f.writeOutput(kind, off, m.Data()); err != nil {
						c.log.Warn("write an agent's output", "attempt", id, "err", err)
					}
				}
			case KindEnd:
				var e End
				if err := json.Unmarshal(m.Data(), &e); err != nil {
					c.log.Warn("a worker's end of an attempt does not parse; taking it for interrupted", "attempt", id, "err", err)
					e.Outcome, e.Result = "interrupted", agent.Result{Error: "interrupted: the worker's report does not parse", ExitCode: -1}
				}
				if started && gate != nil {
					gate.Exited()
				}
				return e.Result, OutcomeFrom(e.Outcome)
			}
		case <-stopping:
			stopping = nil
			if stopOf(ctx) == kindStopInterrupt {
				c.log.Info("leaving an attempt to its worker while the daemon stops; it is recorded at the next start", "attempt", id)
				res := detachedEnding().res
				return res, agent.Interrupted
			}
			cancelSent = c.sendCancel(s, id, "cancelled")
			giveUp = time.After(c.cfg.Grace + 30*time.Second)
		case <-giveUp:
			msg := "cancelled; the worker did not confirm that the agent stopped"
			if !seenStart {
				msg = "cancelled before a worker took it"
			}
			return agent.Result{Error: msg, Summary: msg, ExitCode: -1}, agent.Cancelled
		case <-tick.C:
			if giveUp != nil && !cancelSent {
				cancelSent = c.sendCancel(s, id, "cancelled")
			}
			switch {
			case !c.nc.IsConnected():
				// The worker goes on; what it sends waits in the server.
				n.waiting(fmt.Sprintf("waiting for the NATS server at %s: the attempt's news arrives when it is back", c.url))
			case !seenStart && time.Since(queued) > queuedNote:
				n.waiting(fmt.Sprintf("queued: no worker that serves profile %q has taken it yet", profileOf(f)))
			case n.written != "" && seenStart:
				n.clear() // the server is back
			}
		}
	}
}

// recordStarted rewrites cmd.json with the worker's: argv, cwd, the
// environment's names, as agent.Local records them, plus where it runs.
// The worker's process group is kept under "remote", not as "pid": it is
// no process of this machine.
func (c *Coordinator) recordStarted(f *folder, st Started) {
	info := st.Cmd
	if info == nil {
		info = map[string]any{}
	}
	r := map[string]any{}
	for k, v := range f.remoteInfo() {
		r[k] = v
	}
	r["worker"] = st.Worker
	if pid, ok := info["pid"]; ok {
		r["pid"] = pid
		delete(info, "pid")
	}
	info["remote"] = r
	if err := f.setCmd(info); err != nil {
		c.log.Warn("write cmd.json", "path", f.dir, "err", err)
	}
}

func profileOf(f *folder) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, _ := f.cmd["profile"].(string)
	return p
}

// sendCancel asks attempt id's worker to stop it, and reports whether the
// request is stored (a worker that takes the attempt later finds it too).
func (c *Coordinator) sendCancel(s *Streams, id, reason string) bool {
	data, _ := json.Marshal(Cancel{Reason: reason})
	_, err := s.Publish(context.Background(), id, KindCancel, data, id+".cancel", nil)
	if err != nil {
		c.log.Warn("cannot send a cancel to a worker yet", "attempt", id, "err", err)
	}
	return err == nil
}

// tail delivers the messages of attempt id's run subjects in order, from
// the first, until ctx ends. When its consumer is lost (the server
// restarted, the connection broke for long) it starts again after the
// last message delivered.
func (s *Streams) tail(ctx context.Context, id string, log interface{ Debug(string, ...any) }) <-chan jetstream.Msg {
	ch := make(chan jetstream.Msg)
	go func() {
		var last uint64
		for ctx.Err() == nil {
			cfg := jetstream.OrderedConsumerConfig{
				FilterSubjects:    []string{s.Prefix + ".run." + id + ".>"},
				MaxResetAttempts:  2,
				InactiveThreshold: time.Minute,
			}
			if last > 0 {
				cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, last+1
			}
			err := s.tailOnce(ctx, cfg, ch, &last)
			if ctx.Err() == nil {
				log.Debug("following an attempt again", "attempt", id, "err", err)
				select {
				case <-ctx.Done():
				case <-time.After(500 * time.Millisecond):
				}
			}
		}
	}()
	return ch
}

func (s *Streams) tailOnce(ctx context.Context, cfg jetstream.OrderedConsumerConfig, ch chan<- jetstream.Msg, last *uint64) error {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	cons, err := s.JS.OrderedConsumer(cctx, runsStream(s.Prefix), cfg)
	cancel()
	if err != nil {
		return err
	}
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	for {
		m, err := it.Next()
		if err != nil {
			return err
		}
		if md, err := m.Metadata(); err == nil {
			*last = md.Sequence.Stream
		}
		select {
		case ch <- m:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
