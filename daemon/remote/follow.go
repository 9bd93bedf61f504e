package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/taskd/taskd/daemon/agent"
)

// queuedNote is how long an attempt may wait for a worker before its task
// says so.
const queuedNote = 10 * time.Second

// checkEvery is how often an attempt no worker has claimed is looked for
// in the streams, to publish it again if the server lost it.
const checkEvery = 5 * time.Second

// The states of a remote attempt in cmd.json (remote.state), which taskd
// status shows.
const (
	stateQueued  = "queued"  // published; no worker has claimed it
	stateClaimed = "claimed" // a worker has it and prepares its agent
	stateRunning = "running" // its agent runs on the worker
)

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

// following is an attempt being followed to its end.
type following struct {
	id, subject string
	profile     string
	labels      []string
	f           *folder
	n           *note
	gate        agent.Gate // nil at recovery
	work        *nats.Msg  // the signed work, to publish again if the server loses it

	held    *holding  // the worker that claimed it
	saved   bool      // cmd.json names held
	started bool      // its agent runs
	missing time.Time // since when its worker's heartbeats no longer list it
	queued  time.Time // since when it waits for a worker
	checked time.Time // when the streams were last asked about it
	gen     int       // the streams' generation when they were
	// untrusted says which worker the coordinator does not trust claimed
	// it, if one did.
	untrusted string
	// forged says why its first claim is no worker's, if it is not.
	forged string
}

// endGrace is how long an End may take to arrive after the worker's
// heartbeats stopped listing its attempt.
const endGrace = 5 * time.Second

// await follows attempt fl from what its run subjects hold, from the
// first message: it records the worker that claims it, the worker's
// cmd.json, writes the output into the logs, calls the gate when the agent
// starts and exits, and returns the End. Reports not signed by the worker
// that claimed it are ignored. An attempt whose worker is lost is
// recorded interrupted; one the server lost that no worker holds is
// published again. When ctx ends because the daemon stops, the attempt is
// left to its worker (detached); when the task was cancelled, the worker
// is asked to stop the agent, and its End is awaited for the grace
// period and a little more.
func (c *Coordinator) await(ctx context.Context, fl *following) (agent.Result, agent.Outcome) {
	s := c.streams
	tctx, stopTail := context.WithCancel(context.WithoutCancel(ctx))
	defer stopTail()
	msgs := s.tail(tctx, fl.id, c.log)
	fl.queued, fl.gen = time.Now(), s.Gen()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	stopping := ctx.Done()
	var cancelling, extended bool
	var lastCancel time.Time
	var giveUp <-chan time.Time
	for {
		select {
		case m := <-msgs:
			if res, out, ended := c.take(fl, m); ended {
				return res, out
			}
		case <-stopping:
			stopping = nil
			if stopOf(ctx) == kindStopInterrupt {
				c.log.Info("leaving an attempt to its worker while the daemon stops; it is recorded at the next start", "attempt", fl.id)
				return detachedEnding().res, agent.Interrupted
			}
			cancelling = true
			if c.sendCancel(fl.id, CancelReason) {
				lastCancel = time.Now()
			}
			wait := c.cfg.Grace + 30*time.Second
			if fl.held == nil {
				// Not claimed: taken off the queue, it never runs; a
				// worker that claimed it meanwhile finds the cancel.
				if err := s.DropWork(context.Background(), fl.subject); err != nil {
					c.log.Debug("take a cancelled attempt off the queue", "attempt", fl.id, "err", err)
				}
				wait = 3 * time.Second
			}
			giveUp = time.After(wait)
		case <-giveUp:
			if fl.held != nil && !fl.started && !extended {
				// Claimed meanwhile: its worker answers the cancel.
				extended, giveUp = true, time.After(c.cfg.Grace+30*time.Second)
				continue
			}
			msg := "cancelled; the worker did not confirm that the agent stopped"
			if fl.held == nil {
				msg = "cancelled before a worker took it"
			}
			return agent.Result{Error: msg, Summary: msg, ExitCode: -1}, agent.Cancelled
		case <-tick.C:
			if cancelling && time.Since(lastCancel) > 2*time.Second {
				// Sent again until it is answered: a worker away when it
				// was sent hears it when it is back.
				if c.sendCancel(fl.id, CancelReason) {
					lastCancel = time.Now()
				}
			}
			if res, out, ended := c.check(ctx, fl); ended {
				return res, out
			}
		}
	}
}

// A runMsg is a message of a run subject, delivered or read.
type runMsg interface {
	Subject() string
	Headers() nats.Header
	Data() []byte
}

// take handles message m of attempt fl, and returns its end if it is
// the End.
func (c *Coordinator) take(fl *following, m runMsg) (agent.Result, agent.Outcome, bool) {
	kind := kindOf(m.Subject())
	if kind == KindCancel {
		return agent.Result{}, 0, false // the coordinator's own
	}
	key, err := c.trust.Verify(m.Subject(), m.Headers(), m.Data())
	if err != nil {
		c.log.Warn("ignoring a report of an attempt", "attempt", fl.id, "kind", kind, "err", err)
		return agent.Result{}, 0, false
	}
	if fl.held == nil {
		var st Start
		if kind == KindStart {
			_ = json.Unmarshal(m.Data(), &st)
		}
		c.claimed(fl, holding{Key: key, Boot: st.Boot, Worker: shortName(st.Worker), Seq: st.Seq, At: time.Now()})
	} else if key != fl.held.Key {
		c.log.Warn("ignoring a report of an attempt another worker claimed", "attempt", fl.id, "kind", kind, "key", key, "worker", fl.held.Worker)
		return agent.Result{}, 0, false
	}
	switch kind {
	case KindStarted:
		var st Started
		if json.Unmarshal(m.Data(), &st) != nil {
			return agent.Result{}, 0, false
		}
		c.recordStarted(fl, st)
		if !fl.started {
			fl.started = true
			if fl.gate != nil {
				fl.gate.Started(st.At)
			}
		}
	case KindOut, KindErr:
		off, err := strconv.ParseInt(m.Headers().Get(OffsetHeader), 10, 64)
		if err == nil && off >= 0 {
			if err := fl.f.writeOutput(kind, off, m.Data()); err != nil {
				c.log.Warn("write an agent's output", "attempt", fl.id, "err", err)
			}
		}
	case KindEnd:
		var e End
		if err := json.Unmarshal(m.Data(), &e); err != nil {
			c.log.Warn("a worker's end of an attempt does not parse; taking it for interrupted", "attempt", fl.id, "err", err)
			e.Outcome, e.Result = "interrupted", agent.Result{Error: "interrupted: the worker's report does not parse", ExitCode: -1}
		}
		if fl.started && fl.gate != nil {
			fl.gate.Exited()
		}
		return e.Result, OutcomeFrom(e.Outcome), true
	}
	return agent.Result{}, 0, false
}

// storedMsg is a message read directly from a stream as a jetstream.Msg,
// for take.
type storedMsg struct{ m *nats.Msg }

func (s storedMsg) Subject() string      { return s.m.Subject }
func (s storedMsg) Headers() nats.Header { return s.m.Header }
func (s storedMsg) Data() []byte         { return s.m.Data }

// claimed records that worker h claimed attempt fl. cmd.json names it
// with the agent's start (recordStarted), or, when the agent has not
// started by the next check, then (saveClaim): an agent that starts at
// once costs one rewrite of cmd.json, not two. A restart that finds no
// worker in cmd.json asks the streams and the heartbeats, as it must
// for a claim made while the coordinator was down.
func (c *Coordinator) claimed(fl *following, h holding) {
	fl.held, fl.saved = &h, false
	fl.n.clear()
}

// saveClaim writes the worker that claimed attempt fl into cmd.json, in
// state claimed: taskd status shows it while the worker prepares the
// agent, and a restart after the server lost the Start knows it.
func (c *Coordinator) saveClaim(fl *following) {
	h := fl.held
	fl.saved = true
	err := fl.f.updateRemote(map[string]any{"worker": h.Worker, "key": h.Key, "boot": h.Boot, "seq": h.Seq, "state": stateClaimed})
	if err != nil {
		c.log.Warn("write cmd.json", "path", fl.f.dir, "err", err)
	}
}

// check looks, every second, at what keeps attempt fl from going on: the
// server away, its worker lost, no worker taking it, the server having
// lost it. It returns the attempt's end if its worker is lost.
func (c *Coordinator) check(ctx context.Context, fl *following) (agent.Result, agent.Outcome, bool) {
	if !c.nc.IsConnected() {
		// The worker goes on; what it sends waits in the server.
		fl.n.waiting(fmt.Sprintf("waiting for the NATS server at %s: the attempt's news arrives when it is back", c.url))
		return agent.Result{}, 0, false
	}
	if fl.held != nil {
		if !fl.saved && !fl.started {
			c.saveClaim(fl)
		}
		v, why := c.pool.judge(*fl.held, fl.id)
		switch {
		case v == lost:
			return c.lost(fl, why)
		case v == notHolding && fl.missing.IsZero():
			fl.missing = time.Now()
		case v == notHolding && time.Since(fl.missing) > endGrace:
			// The End may be stored and not yet delivered: asked for
			// directly before the attempt is taken for lost.
			if m, err := c.streams.Last(ctx, fl.id, KindEnd); err != nil {
				return agent.Result{}, 0, false
			} else if m != nil {
				if res, out, ended := c.take(fl, storedMsg{m}); ended {
					return res, out, true
				}
			}
			return c.lost(fl, why+" and its end never came")
		case v == alive:
			fl.missing = time.Time{}
		}
		if fl.n.written != "" {
			fl.n.clear() // the server is back
		}
		return agent.Result{}, 0, false
	}
	switch {
	case fl.untrusted != "":
		fl.n.waiting(fl.untrusted)
	case time.Since(fl.queued) > queuedNote:
		fl.n.waiting(c.pool.why(fl.profile, fl.labels))
	}
	if gen := c.streams.Gen(); gen != fl.gen || time.Since(fl.checked) > checkEvery {
		if c.lookFor(ctx, fl) {
			fl.gen = gen
		}
	}
	if fl.forged != "" {
		c.log.Warn("an attempt's claim is forged; recording it interrupted, to run again", "attempt", fl.id, "why", fl.forged)
		msg := "interrupted: " + fl.forged
		return agent.Result{Error: msg, Summary: msg, ExitCode: -1}, agent.Interrupted, true
	}
	return agent.Result{}, 0, false
}

// lookFor asks where attempt fl is, that no worker has claimed in what
// the coordinator saw: in the queue, claimed (a worker's heartbeat lists
// it: the server lost its claim), or nowhere — the server lost it, or
// never got it — and then publishes it again. It reports whether it could
// ask.
func (c *Coordinator) lookFor(ctx context.Context, fl *following) bool {
	fl.checked = time.Now()
	if h, ok := c.pool.holder(fl.id); ok {
		c.log.Info("a worker holds an attempt whose claim the NATS server lost", "attempt", fl.id, "worker", h.Worker)
		c.claimed(fl, h)
		return true
	}
	queued, err := c.streams.WorkQueued(ctx, fl.subject)
	if err != nil || queued {
		return err == nil
	}
	for _, kind := range []string{KindStart, KindEnd} {
		m, err := c.streams.Last(ctx, fl.id, kind)
		if err != nil {
			return false
		}
		if m == nil {
			continue
		}
		switch key, err := c.trust.Verify(m.Subject, m.Header, m.Data); {
		case kind != KindStart || err == nil:
		case errors.Is(err, ErrUntrusted):
			// A worker the coordinator does not trust took it: what it
			// reports is ignored. The operator must choose.
			var st Start
			_ = json.Unmarshal(m.Data, &st)
			fl.untrusted = fmt.Sprintf("claimed by worker %s, whose key %s is not in nats.workerKeys: what it reports is ignored; add its key, or stop it", shortName(st.Worker), key)
		default:
			// Unsigned, or not signed by the key it names: no worker's
			// claim, and no worker runs it (each finds it and leaves
			// the attempt). It must run again under a new id.
			fl.forged = fmt.Sprintf("its claim is not a worker's (%v): someone with the workers' NATS credentials took it", err)
		}
		return true // the tail brings it
	}
	if !c.pool.settled() {
		return false // a worker that holds it may not have said so yet
	}
	c.log.Warn("publishing again an attempt the NATS server does not have, that no worker holds", "attempt", fl.id, "subject", fl.subject)
	if err := c.publishWorkAgain(ctx, c.streams, fl); err != nil {
		c.log.Warn("cannot publish an attempt again yet", "attempt", fl.id, "err", err)
		return false
	}
	fl.queued = time.Now()
	return true
}

// shortName is a name a worker gave itself, at most 64 bytes of it, for
// what the coordinator writes.
func shortName(s string) string {
	if len(s) > 64 {
		s = strings.ToValidUTF8(s[:64], "") + "…"
	}
	return s
}

// lost ends attempt fl, whose worker is lost: the worker is told to stop
// it (when it hears), and it is recorded interrupted, to run again.
func (c *Coordinator) lost(fl *following, why string) (agent.Result, agent.Outcome, bool) {
	c.log.Warn("an attempt's worker is lost; recording it interrupted", "attempt", fl.id, "why", why)
	c.sendCancel(fl.id, LostReason)
	if fl.started && fl.gate != nil {
		fl.gate.Exited()
	}
	msg := "interrupted: " + why
	return agent.Result{Error: msg, Summary: msg, ExitCode: -1}, agent.Interrupted, true
}

// recordStarted rewrites cmd.json with the worker's: argv, cwd, the
// environment's names, as agent.Local records them, plus where it runs.
// The worker's process group is kept under "remote", not as "pid": it is
// no process of this machine.
func (c *Coordinator) recordStarted(fl *following, st Started) {
	info := st.Cmd
	if info == nil {
		info = map[string]any{}
	}
	r := map[string]any{}
	for k, v := range fl.f.remoteInfo() {
		r[k] = v
	}
	if h := fl.held; h != nil {
		r["key"], r["boot"], r["seq"] = h.Key, h.Boot, h.Seq
		fl.saved = true
	}
	r["worker"], r["state"] = st.Worker, stateRunning
	if pid, ok := info["pid"]; ok {
		r["pid"] = pid
		delete(info, "pid")
	}
	delete(info, "startTime")
	delete(info, "boot")
	info["remote"] = r
	// A task claimed ahead of its slot may still read starting: what
	// tells its recovery that the attempt passed its gate stays.
	if e, ok := fl.f.cmdKey("entered"); ok {
		info["entered"] = e
	}
	if err := fl.f.setCmd(info); err != nil {
		c.log.Warn("write cmd.json", "path", fl.f.dir, "err", err)
	}
}

// sendCancel asks attempt id's worker to stop it, for reason, and reports
// whether the request is stored (a worker that takes the attempt later
// finds it too).
func (c *Coordinator) sendCancel(id, reason string) bool {
	data, _ := json.Marshal(Cancel{Reason: reason})
	_, err := c.streams.Publish(context.Background(), id, KindCancel, Message{Data: data, ID: id + ".cancel"})
	if err != nil {
		c.log.Warn("cannot send a cancel to a worker yet", "attempt", id, "err", err)
	}
	return err == nil
}
