package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
)

// handle runs one delivered attempt to its end: it checks it, claims it,
// acknowledges it once the claim is stored, runs it and publishes its
// End. ctx ends (with agent.ErrInterrupted) when the worker stops what
// runs.
func (w *Worker) handle(ctx context.Context, m jetstream.Msg) {
	wk, err := w.accept(m)
	if err != nil {
		w.refuse(m, err)
		return
	}
	log := w.log.With("list", wk.List, "task", wk.Task, "attempt", wk.N, "remote", wk.ID)
	if w.draining.Load() {
		_ = m.Nak() // for another worker
		return
	}
	if w.endedHere(wk.ID) {
		_ = m.Ack()
		return
	}
	r, ok := w.register(wk)
	if !ok {
		_ = m.Ack() // delivered again while it is handled here
		return
	}
	ended := false
	defer func() { w.unregister(wk.ID, ended) }()
	if wk.Repo != "" {
		// Only a repository's worktree makes the attempt a folder of its
		// own (workDir); a worker restarted after a crash removes what
		// one left (the attempts folder's sweep).
		defer w.removeAttemptDir(wk.ID) // last: after the worktree is removed
	}
	// A cancel stored before the attempt was registered here is read
	// while it is claimed; one stored since comes through the
	// subscription (onCancel), which finds it registered.
	cancel := w.lastCancel(ctx, wk.ID)
	if !w.claim(ctx, m, wk, log) {
		return
	}
	// Once the claim is stored the attempt is this worker's: a copy
	// delivered again finds the claim, so the agent need not wait for the
	// server to confirm the ack.
	acked := make(chan struct{})
	go func() { defer close(acked); acknowledge(ctx, m) }()
	defer func() { <-acked }()
	if c := <-cancel; c != nil {
		w.cancelled(r, wk.ID, c.Subject, c.Header, c.Data)
	}
	if errors.Is(r.stopCause(), agent.ErrCancelled) {
		ended = w.end(ctx, r, wk, notStarted("cancelled before it started", agent.Cancelled), log)
		return
	}
	rctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	r.setStop(stop)

	cwd, release, err := w.workDir(rctx, wk)
	if err != nil {
		ended = w.end(ctx, r, wk, notStarted(err.Error(), agent.NotStarted), log)
		return
	}
	defer release()
	a, err := w.attempt(wk, cwd)
	if err != nil {
		ended = w.end(ctx, r, wk, notStarted(err.Error(), agent.NotStarted), log)
		return
	}
	defer w.putList(a.ListDir, wk.Task)
	g := &gate{w: w, r: r, wk: wk, runDir: a.Dir()}
	a.Gate = g
	out := newShipper(w, wk.ID, a.Dir())
	shipping, stopShipping := context.WithCancel(context.WithoutCancel(ctx))
	shipped := make(chan struct{})
	go func() { defer close(shipped); out.run(shipping) }()
	log.Info("running an attempt", "profile", wk.Profile, "cwd", cwd)
	res, outcome := w.local.Run(rctx, a)
	stopShipping()
	<-shipped
	if outcome == agent.Interrupted {
		res.Error = fmt.Sprintf("interrupted: worker %s stopped while the agent ran", w.cfg.Name)
		res.Summary = res.Error
	}
	g.wait()
	out.flush(ctx)
	ended = w.end(ctx, r, wk, finished{res: res, out: outcome, shipped: out}, log)
}

// accept checks work message m: signed by a coordinator the worker
// trusts, well formed, of a profile this worker serves and defines, asking
// for labels it has.
func (w *Worker) accept(m jetstream.Msg) (remote.Work, error) {
	var wk remote.Work
	if _, err := w.trust.Verify(m.Subject(), m.Headers(), m.Data()); err != nil {
		return wk, err
	}
	if err := json.Unmarshal(m.Data(), &wk); err != nil {
		return wk, fmt.Errorf("%w: %v", errMalformed, err)
	}
	if err := wk.Check(m.Subject()); err != nil {
		return wk, fmt.Errorf("%w: %v", errMalformed, err)
	}
	if m.Subject() != remote.WorkSubject(w.c.Prefix, wk.Profile, wk.Labels, wk.ID) {
		return wk, fmt.Errorf("%w: its profile and labels are not its subject's", errMalformed)
	}
	if !slices.Contains(w.cfg.Profiles, wk.Profile) || w.cfg.Defined[wk.Profile] == nil {
		return wk, fmt.Errorf("%w: profile %q is not one this worker serves", errMalformed, wk.Profile)
	}
	for _, l := range wk.Labels {
		if !slices.Contains(w.cfg.Labels, l) {
			return wk, fmt.Errorf("%w: it asks for label %q", errMalformed, l)
		}
	}
	if time.Since(wk.Sent) > remote.RunsMaxAge {
		return wk, fmt.Errorf("%w: it was sent %s, too long ago to be run", errMalformed, wk.Sent.Format(time.RFC3339))
	}
	return wk, nil
}

// errMalformed marks work that its coordinator signed and that this
// worker still cannot run.
var errMalformed = errors.New("malformed work")

// refuse drops work that failed accept: unsigned or forged work is left
// for a worker that trusts its signer (it is not this worker's to take
// off the queue), work its coordinator signed that no worker can run is
// taken off.
func (w *Worker) refuse(m jetstream.Msg, err error) {
	w.log.Error("refusing an attempt", "subject", m.Subject(), "err", err)
	if errors.Is(err, errMalformed) {
		_ = m.Term()
		return
	}
	_ = m.NakWithDelay(10 * time.Second)
}

// claim stores the worker's Start of attempt wk, the first Start of it
// (an expected last sequence of 0), and reports whether the attempt is
// this worker's. An attempt another worker claimed is acknowledged and
// left to it; one that cannot be claimed while the server is away goes
// back to the queue.
func (w *Worker) claim(ctx context.Context, m jetstream.Msg, wk remote.Work, log *slog.Logger) bool {
	st := remote.Start{Worker: w.cfg.Name, Boot: w.boot, Seq: w.hbSeq.Load(), Host: w.host, At: time.Now().UTC()}
	data, _ := json.Marshal(st)
	deadline := time.Now().Add(30 * time.Second)
	for {
		msg := &nats.Msg{Subject: remote.RunSubject(w.c.Prefix, wk.ID, remote.KindStart), Data: data}
		_, err := w.c.PublishMsg(context.WithoutCancel(ctx), msg, jetstream.WithExpectLastSequencePerSubject(0))
		if err == nil {
			return true
		}
		if remote.WrongLastSeq(err) {
			if w.claimedHere(ctx, wk.ID) {
				return true // this worker's claim, whose answer was lost
			}
			log.Info("another worker claimed this attempt; leaving it to that one")
			_ = m.Ack()
			return false
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			log.Warn("could not claim an attempt; it goes back to the queue", "err", err)
			_ = m.NakWithDelay(time.Second)
			return false
		}
		_ = m.InProgress()
		sleep(ctx, time.Second)
	}
}

// lastCancel reads the cancel of attempt id its coordinator stored, if
// any, while the caller goes on: the channel yields it (nil if there is
// none or it cannot be read).
func (w *Worker) lastCancel(ctx context.Context, id string) <-chan *nats.Msg {
	ch := make(chan *nats.Msg, 1)
	go func() {
		c, err := w.c.Last(ctx, id, remote.KindCancel)
		if err != nil {
			c = nil
		}
		ch <- c
	}()
	return ch
}

// claimedHere reports whether the stored Start of attempt id is this
// worker process's.
func (w *Worker) claimedHere(ctx context.Context, id string) bool {
	prev, err := w.c.Last(context.WithoutCancel(ctx), id, remote.KindStart)
	if err != nil || prev == nil {
		return false
	}
	// Signed by this worker's key, not only naming it: anyone with a
	// worker's credentials can store a claim that names it.
	me := w.c.Signer.PublicKey()
	if key, err := (remote.Trust{me: true}).Verify(prev.Subject, prev.Header, prev.Data); err != nil || key != me {
		return false
	}
	var st remote.Start
	return json.Unmarshal(prev.Data, &st) == nil && st.Boot == w.boot
}

// acknowledge takes a claimed attempt off the queue, trying a few times:
// one delivered again after all finds the claim and is left alone.
func acknowledge(ctx context.Context, m jetstream.Msg) {
	for range 3 {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		err := m.DoubleAck(actx)
		cancel()
		if err == nil {
			return
		}
		sleep(context.WithoutCancel(ctx), time.Second)
	}
}

// A finished is how an attempt ended here, and what of its output was
// shipped to the coordinator (nil: its agent never ran).
type finished struct {
	res     agent.Result
	out     agent.Outcome
	shipped *shipper
}

func notStarted(msg string, out agent.Outcome) finished {
	return finished{res: agent.Result{Success: false, ExitCode: -1, Error: msg, Summary: msg, Outcome: map[agent.Outcome]string{agent.Cancelled: "cancelled", agent.NotStarted: "not_started"}[out]}, out: out}
}

// end publishes the End of attempt wk, trying again until it is stored or
// the worker stops now, and reports whether it was stored.
func (w *Worker) end(ctx context.Context, r *run, wk remote.Work, f finished, log *slog.Logger) bool {
	e := remote.End{Worker: w.cfg.Name, List: wk.List, Task: wk.Task, N: wk.N, Sub: wk.Sub,
		Outcome: remote.OutcomeName(f.out), Result: f.res}
	if f.shipped != nil {
		e.Stdout, e.Stderr = f.shipped.sent[0], f.shipped.sent[1]
	}
	data, _ := json.Marshal(e)
	r.setEnding()
	failed := false
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 2*time.Second) {
		dup, err := w.c.Publish(context.WithoutCancel(ctx), wk.ID, remote.KindEnd, remote.Message{Data: data, ID: wk.ID + ".end"})
		if err == nil {
			if dup {
				log.Info("the attempt's end was stored already")
			}
			break
		}
		if !failed {
			log.Warn("cannot send an attempt's end yet; trying again until the server takes it", "err", err)
			failed = true
		} else {
			log.Debug("cannot send an attempt's end yet", "err", err)
		}
		select {
		case <-w.stopNow:
			log.Error("stopping without sending an attempt's end; its coordinator records it lost", "err", err)
			return false
		case <-time.After(delay):
		}
	}
	log.Info("attempt ended", "outcome", e.Outcome, "success", f.res.Success)
	return true
}

// errLost stops an agent whose attempt its coordinator recorded lost.
var errLost = errors.New("the coordinator recorded the attempt lost while this worker was silent")

// attempt is wk as an agent.Attempt of this machine, to run in cwd with
// the worker's own profile of that name: its run folder in a list
// directory of the worker's state directory (takeList); TASKD_ROOT, TASKD_TASK_FILE the coordinator's, mapped
// (--dir-map); the transcript in the local run folder.
func (w *Worker) attempt(wk remote.Work, cwd string) (*agent.Attempt, error) {
	listDir, err := w.takeList()
	if err != nil {
		return nil, err
	}
	a := &agent.Attempt{
		ListDir: listDir, ListID: wk.List, TaskID: wk.Task, Parent: wk.Parent, N: wk.N, Step: wk.Step,
		Profile: w.cfg.Defined[wk.Profile], Prompt: wk.Prompt, Script: wk.Script, Cwd: cwd,
		Timeout: time.Duration(wk.Timeout), Session: wk.Session, Resume: wk.Resume, Sub: wk.Sub, Fork: wk.Fork, Files: wk.Files,
		OutputMax: wk.OutputMax,
		NoResult:  true, // the End carries it; the run folder goes with the attempt
		Spec: task.Spec{Model: wk.Flags.Model, PermissionMode: wk.Flags.PermissionMode, Tools: wk.Flags.Tools,
			DisallowTools: wk.Flags.DisallowTools, SystemPrompt: wk.Flags.SystemPrompt},
		Budget: agent.Budget{MaxTurns: wk.Budget.MaxTurns, MaxCostUSD: wk.Budget.MaxCostUSD},
	}
	a.Env = map[string]string{}
	for k, v := range wk.Env {
		a.Env[k] = v
	}
	a.Env["TASKD_ROOT"] = mapPath(w.cfg.DirMap, wk.Root)
	a.Env["TASKD_TASK_FILE"] = mapPath(w.cfg.DirMap, filepath.Join(wk.ListDir, wk.Task+".json"))
	if _, ok := a.Env["TASKD_TRANSCRIPT"]; ok {
		a.Env["TASKD_TRANSCRIPT"] = filepath.Join(a.Dir(), "transcript.json")
	}
	return a, nil
}

func (w *Worker) removeAttemptDir(id string) {
	if remote.PlainID(id) {
		_ = os.RemoveAll(filepath.Join(w.attemptsDir(), id))
	}
}

// A gate lets the agent start unless the attempt was cancelled meanwhile,
// and publishes the Started once it runs.
type gate struct {
	w      *Worker
	r      *run
	wk     remote.Work
	runDir string
	sent   sync.WaitGroup
}

func (g *gate) Enter(ctx context.Context) error {
	if err := g.r.stopCause(); err != nil {
		return err
	}
	g.r.setState("running")
	return nil
}

func (g *gate) Started(at time.Time) {
	var cmd map[string]any
	if data, err := fsroot.ReadRegular(filepath.Join(g.runDir, "cmd.json")); err == nil {
		_ = json.Unmarshal(data, &cmd)
	}
	data, _ := json.Marshal(remote.Started{Worker: g.w.cfg.Name, At: at.UTC(), Cmd: cmd})
	g.sent.Add(1)
	go func() {
		defer g.sent.Done()
		for delay := 100 * time.Millisecond; delay < 30*time.Second; delay *= 2 {
			if _, err := g.w.c.Publish(context.Background(), g.wk.ID, remote.KindStarted, remote.Message{Data: data, ID: g.wk.ID + ".started"}); err == nil {
				return
			}
			sleep(context.Background(), delay)
		}
	}()
}

func (g *gate) Exited() {}

// wait waits until the Started is stored (or given up on).
func (g *gate) wait() { g.sent.Wait() }
