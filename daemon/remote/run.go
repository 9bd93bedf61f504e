package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/taskfile"
)

// Run runs attempt a on a worker (or here, if nats.local names its
// profile or list): it prepares the run folder, waits at the gate,
// publishes the attempt and follows it to its end as Reattach does. Like
// agent.Local's, its result.json is written the moment the end is known,
// except for an attempt interrupted or left running elsewhere.
func (c *Coordinator) Run(ctx context.Context, a *agent.Attempt) (agent.Result, agent.Outcome) {
	if c.isLocal(a) {
		return c.local.Run(ctx, a)
	}
	start := time.Now()
	f, err := prepare(a, a.OutputLimit(c.cfg))
	if err != nil {
		return c.settle(a, nil, start, notStarted(err.Error()))
	}
	defer f.close()
	id := newID()
	labels := a.Spec.Labels
	subject := WorkSubject(c.prefix, a.Profile.Name, labels, id)
	w := workOf(a, id, c.cfg)
	w.Repo, w.Ref = repoOf(a)
	data, err := json.Marshal(w)
	if err != nil {
		return c.settle(a, f, start, notStarted(fmt.Sprintf("encode the attempt: %v", err)))
	}
	msg := &nats.Msg{Subject: subject, Data: data}
	c.signer.Sign(msg)
	rem := map[string]any{"attempt": id, "subject": subject, "state": stateQueued}
	cmd := map[string]any{
		"cwd": a.Cwd, "env": a.Profile.Env, "profile": a.Profile.Name, "timeout": a.Timeout.String(),
		"step": a.Step, "attempt": a.N, "prompt": a.Profile.Prompt, "output": a.Profile.Output,
		"remote": rem,
	}
	if a.Session != "" {
		cmd["sessionId"] = a.Session
	}
	if err := f.keepWork(msg, rem); err != nil {
		return c.settle(a, f, start, notStarted(err.Error()))
	}
	if a.Gate != nil {
		if err := a.Gate.Enter(ctx); err != nil {
			a.Stopped = err
			return agent.Result{Success: false, ExitCode: -1}, agent.StoppedOutcome(err)
		}
		cmd["entered"] = true
	}
	// cmd.json names the remote attempt, and keeps it (or work.json
	// does, written first), before it can exist, and says that it passed
	// its gate (entered), as agent.Local's says before its agent starts:
	// a daemon that dies from here on follows it at its next start, and
	// publishes it if the server never got it, even with its task left
	// starting (claimed ahead of its slot, the running mark comes with
	// the job's next write, as for a local agent; the recovery of such a
	// task reads entered). One write, after the gate: before it, a
	// restart has nothing to follow, and a task left starting goes back
	// to pending.
	if err := f.setCmd(cmd); err != nil {
		return c.settle(a, f, start, notStarted(fmt.Sprintf("write cmd.json: %v", err)))
	}
	done := c.follow(id)
	defer done()
	n := &note{listDir: a.ListDir, task: a.TaskID, attempt: a.N, entered: cmd["entered"] == true, log: c.log}
	defer n.clear()
	fl := &following{id: id, subject: subject, profile: a.Profile.Name, labels: labels, f: f, n: n, gate: a.Gate, work: msg}
	stopWatch := c.watch(a, f)
	if s := c.publish(ctx, fl); s == nil {
		stopWatch()
		return c.settle(a, f, start, c.unsent(ctx))
	}
	res, out := c.await(ctx, fl)
	stopWatch()
	return c.settle(a, f, start, ending{res, out, id})
}

// watch follows the run folder's stdout.log as the worker's output lands
// in it, when the agent streams JSON events: transcript.log is written as
// agent.Local writes it, and the progress reported to a.Report, so that
// taskd logs and taskd status show a remote agent as a local one. The
// function it returns stops it, once the output is all in.
func (c *Coordinator) watch(a *agent.Attempt, f *folder) (stop func()) {
	if !agent.IsStream(a.Profile.Output) {
		return func() {}
	}
	// The worker enforces the budget; this watcher only reads.
	wa := &agent.Attempt{ListDir: a.ListDir, ListID: a.ListID, TaskID: a.TaskID, N: a.N, Sub: a.Sub, Profile: a.Profile, Report: a.Report}
	w := agent.Watch(wa, a.OutputLimit(c.cfg), func(session string) {
		if err := f.setKey("sessionId", session); err != nil {
			c.log.Debug("record an agent's session", "path", f.dir, "err", err)
		}
	})
	f.follow(w.Write)
	return func() {
		f.follow(nil)
		w.Finish()
	}
}

// An ending is how an attempt ended, and its id if it was sent.
type ending struct {
	res agent.Result
	out agent.Outcome
	id  string
}

func notStarted(msg string) ending {
	return ending{agent.Result{Success: false, ExitCode: -1, Error: msg, Summary: msg}, agent.NotStarted, ""}
}

// settle completes an attempt's result as agent.Local does (its duration,
// success and outcome), writes result.json unless the attempt was
// interrupted or goes on elsewhere, and then forgets what the runs stream
// holds of it.
func (c *Coordinator) settle(a *agent.Attempt, f *folder, start time.Time, e ending) (agent.Result, agent.Outcome) {
	res, out := e.res, e.out
	if res.DurationMs == 0 {
		res.DurationMs = time.Since(start).Milliseconds()
	}
	if out != agent.Finished {
		res.Success = false
		if name, ok := resultOutcome[out]; ok && res.Outcome == "" {
			res.Outcome = name
		}
		if res.Error == "" {
			res.Error = map[agent.Outcome]string{
				agent.TimedOut:    fmt.Sprintf("timed out after %s", a.Timeout),
				agent.Cancelled:   "cancelled",
				agent.Interrupted: "interrupted: the worker stopped while the agent ran",
			}[out]
		}
	}
	if out == agent.Interrupted && res.Outcome == job.Detached {
		return res, out
	}
	dir := a.Dir()
	written := false
	if out != agent.Interrupted {
		kept, err := agent.WriteResult(a.ListDir, dir, res)
		if err != nil {
			c.log.Warn("write result", "task", a.TaskID, "path", dir, "kept", kept, "err", err)
		}
		written = err == nil || kept != ""
	}
	// What the stream holds of an attempt is forgotten once result.json
	// (or the copy kept while the run folder cannot take it) holds its
	// end: recovery reads that first. An interrupted attempt has no
	// result.json; its record stays until the stream's age limit, for a
	// restart to find, as does one whose result could not be written.
	if s := c.ready(closedContext); e.id != "" && s != nil && written {
		c.forget(e.id)
	}
	return res, out
}

// maxForgets bounds the attempts waiting to be forgotten; beyond it,
// settle forgets one itself.
const maxForgets = 1024

// forgetDelay is how long what the runs stream holds of an ended attempt
// is kept before it is forgotten. A purge that empties the stream's last
// block has the server replace that block's file — one file created and
// one removed per attempt, which costs more than the purge on a busy
// disk; a moment later, the attempts that followed have records beside
// it, and the purge only marks messages removed.
const forgetDelay = 2 * time.Second

// forget has what the runs stream holds of attempt id, whose end is
// recorded, removed in the background (forgetting), after forgetDelay,
// so that the attempt's job does not wait for the server. A record the
// daemon stops before removing stays until the stream's age limit, as
// one the server could not remove does.
func (c *Coordinator) forget(id string) {
	select {
	case c.forgets <- id:
	default:
		c.forgetNow(id)
	}
}

// forgetting forgets the attempts handed to forget, each forgetDelay
// after, until ctx ends; then those still waiting, for as long as the
// server answers within forgetFlush.
func (c *Coordinator) forgetting(ctx context.Context) {
	type due struct {
		id string
		at time.Time
	}
	var queue []due
	timer := time.NewTimer(forgetDelay)
	defer timer.Stop()
	for {
		var wake <-chan time.Time
		if len(queue) > 0 {
			timer.Reset(time.Until(queue[0].at))
			wake = timer.C
		}
		select {
		case <-ctx.Done():
			// Those handed over as ctx ended are forgotten too: select
			// may have taken ctx's end before them.
			for drained := false; !drained; {
				select {
				case id := <-c.forgets:
					queue = append(queue, due{id: id})
				default:
					drained = true
				}
			}
			fctx, cancel := context.WithTimeout(context.Background(), forgetFlush)
			for _, d := range queue {
				if fctx.Err() != nil {
					break
				}
				c.forgetIn(fctx, d.id)
			}
			cancel()
			return
		case id := <-c.forgets:
			if len(queue) >= maxForgets {
				c.forgetNow(queue[0].id)
				queue = queue[1:]
			}
			queue = append(queue, due{id, time.Now().Add(forgetDelay)})
		case now := <-wake:
			for len(queue) > 0 && !queue[0].at.After(now) {
				c.forgetNow(queue[0].id)
				queue = queue[1:]
			}
		}
	}
}

// forgetFlush bounds how long a stopping coordinator forgets the
// attempts still waiting to be.
const forgetFlush = 2 * time.Second

func (c *Coordinator) forgetNow(id string) { c.forgetIn(context.Background(), id) }

func (c *Coordinator) forgetIn(ctx context.Context, id string) {
	if err := c.streams.Forget(ctx, id); err != nil {
		c.log.Debug("forget a recorded attempt", "attempt", id, "err", err)
	}
}

// resultOutcome is what result.json's outcome says of an attempt that did
// not end on its own (agent.OutcomeOf reads it back).
var resultOutcome = map[agent.Outcome]string{agent.TimedOut: "timed_out", agent.Cancelled: "cancelled", agent.NotStarted: "not_started",
	agent.Paused: "paused", agent.OverBudget: "over_budget"}

// unsent is how an attempt ends that was not published when ctx ended:
// cancelled, or left for the next start (which publishes it).
func (c *Coordinator) unsent(ctx context.Context) ending {
	if stopOf(ctx) == kindStopInterrupt {
		return detachedEnding()
	}
	msg := "cancelled before it was sent to a worker"
	return ending{agent.Result{Error: msg, Summary: msg, ExitCode: -1}, agent.Cancelled, ""}
}

func detachedEnding() ending {
	return ending{agent.Result{Error: "left running on its worker while the daemon stopped", ExitCode: -1, Outcome: job.Detached}, agent.Interrupted, ""}
}

// publish publishes the attempt fl follows, trying again until the server
// has stored it (a retry is harmless: the stream drops a message id it
// has seen) or ctx ends. While it cannot, the task says why. It returns
// the streams, or nil if ctx ended first.
func (c *Coordinator) publish(ctx context.Context, fl *following) *Streams {
	s := c.streamsFor(ctx, fl.n)
	if s == nil {
		return nil
	}
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 2*time.Second) {
		err := c.publishWork(ctx, s, fl)
		if err == nil {
			fl.n.clear()
			return s
		}
		if errors.Is(err, ErrPermission) {
			fl.n.waiting(fmt.Sprintf("the NATS server at %s does not let the coordinator send the attempt: %v", c.url, err))
		} else {
			fl.n.waiting(fmt.Sprintf("waiting for the NATS server at %s to take the attempt: %v", c.url, err))
		}
		if sleep(ctx, delay); ctx.Err() != nil {
			return nil
		}
	}
}

// publishWork publishes fl's work, signed as it was saved, once its
// consumer is made.
func (c *Coordinator) publishWork(ctx context.Context, s *Streams, fl *following) error {
	_, err := c.publishWorkAs(ctx, s, fl, fl.id)
	return err
}

// publishWorkAgain publishes fl's work again, which the work stream no
// longer holds and no worker claimed (someone pulled it and took it off
// the queue unclaimed, or the server lost it). A server that still
// remembers its message id (the stream's deduplication window) would
// drop it as a duplicate: it is then published under a new one. The
// signature does not cover the message id.
func (c *Coordinator) publishWorkAgain(ctx context.Context, s *Streams, fl *following) error {
	c.resign(fl)
	dup, err := c.publishWorkAs(ctx, s, fl, fl.id)
	if err != nil || !dup {
		return err
	}
	c.log.Warn("the NATS server remembers an attempt it no longer holds: taken off the queue without a claim (by a worker's credentials?); publishing it under a new message id", "attempt", fl.id)
	_, err = c.publishWorkAs(ctx, s, fl, fl.id+"."+newID())
	return err
}

// resign signs fl's work again, sent now, if it was sent more than half
// of what workers accept ago (RunsMaxAge): a worker refuses an attempt
// sent longer ago than that and takes it off the queue, so that one
// kept in its run folder while the coordinator was away for a week would
// be published again and refused for ever.
func (c *Coordinator) resign(fl *following) {
	var w Work
	if err := json.Unmarshal(fl.work.Data, &w); err != nil || time.Since(w.Sent) < RunsMaxAge/2 {
		return
	}
	w.Sent = time.Now().UTC()
	data, err := json.Marshal(w)
	if err != nil {
		return
	}
	m := &nats.Msg{Subject: fl.work.Subject, Data: data}
	c.signer.Sign(m)
	c.log.Info("signing again an attempt sent too long ago for a worker to run it", "attempt", fl.id)
	fl.work = m
}

func (c *Coordinator) publishWorkAs(ctx context.Context, s *Streams, fl *following, msgID string) (duplicate bool, err error) {
	if err := s.EnsureConsumer(ctx, fl.profile, fl.labels); err != nil {
		return false, err
	}
	m := &nats.Msg{Subject: fl.work.Subject, Data: fl.work.Data, Header: fl.work.Header}
	pctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	ack, err := s.JS.PublishMsg(pctx, m, jetstream.WithMsgID(msgID))
	if err != nil {
		return false, c.nc.Explain(err)
	}
	return ack.Duplicate, nil
}

// streamsFor waits for the streams, saying why in the task meanwhile.
func (c *Coordinator) streamsFor(ctx context.Context, n *note) *Streams {
	select {
	case <-c.streamsReady:
		return c.streams
	default:
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		n.waiting(fmt.Sprintf("waiting for the NATS server at %s", c.url))
		select {
		case <-c.streamsReady:
			return c.streams
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// workOf is attempt a on the wire, as id.
func workOf(a *agent.Attempt, id string, cfg *config.Config) Work {
	s := a.Spec
	return Work{
		ID: id, Root: cfg.Root, ListDir: a.ListDir, List: a.ListID, Task: a.TaskID, Parent: a.Parent,
		N: a.N, Sub: a.Sub, Step: a.Step, Profile: a.Profile.Name, Labels: s.Labels, Prompt: a.Prompt, Script: a.Script,
		Cwd: a.Cwd, Timeout: Duration(a.Timeout), Session: a.Session, Resume: a.Resume, Fork: a.Fork, Env: a.Env, Files: a.Files,
		Flags:     Flags{Model: s.Model, PermissionMode: s.PermissionMode, Tools: s.Tools, DisallowTools: s.DisallowTools, SystemPrompt: s.SystemPrompt},
		Budget:    Budget{MaxTurns: a.Budget.MaxTurns, MaxCostUSD: a.Budget.MaxCostUSD},
		OutputMax: a.OutputLimit(cfg),
		Sent:      time.Now().UTC(),
	}
}

// repoOf returns metadata.taskd.repo and ref of a's task: a repository
// the worker clones to run the agent in.
func repoOf(a *agent.Attempt) (repo, ref string) {
	t, err := taskfile.ReadFile(filepath.Join(a.ListDir, a.TaskID+".json"))
	if err != nil {
		return "", ""
	}
	m := t.Metadata.Object("taskd")
	repo, _ = m.String("repo")
	ref, _ = m.String("ref")
	return repo, ref
}
