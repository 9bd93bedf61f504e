package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
)

// handle runs one delivered attempt to its end and acknowledges it once
// its End is stored. ctx ends (with agent.ErrInterrupted) when the worker
// stops.
func (w *Worker) handle(ctx context.Context, m jetstream.Msg) {
	var wk remote.Work
	if err := json.Unmarshal(m.Data(), &wk); err != nil || wk.ID == "" {
		w.log.Warn("dropping work that does not parse", "subject", m.Subject(), "err", err)
		_ = m.Term()
		return
	}
	log := w.log.With("list", wk.List, "task", wk.Task, "attempt", wk.N, "remote", wk.ID)
	r, adopted := w.register(wk.ID, m)
	if adopted {
		// Delivered again while it runs here (the server restarted, or an
		// acknowledgement was late): the running attempt keeps the new
		// delivery alive and acknowledges it with the old.
		log.Info("an attempt running here was delivered again; keeping it")
		return
	}
	defer w.unregister(wk.ID)
	defer w.removeAttemptDir(wk.ID) // last: after the worktree is removed
	if md, err := m.Metadata(); err == nil && md.NumDelivered > 1 {
		if w.settled(ctx, r, wk, log) {
			return
		}
	}
	if c, _ := w.s.Last(ctx, wk.ID, remote.KindCancel); c != nil {
		w.end(ctx, r, wk, notStarted("cancelled before it started", agent.Cancelled), nil, log)
		return
	}
	rctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	r.setStop(stop)
	// Alive while it runs: in-progress acknowledgements, and a look for a
	// cancel the subscription may have missed while disconnected.
	keep, stopKeep := context.WithCancel(context.WithoutCancel(ctx))
	defer stopKeep()
	go w.keepAlive(keep, r, wk.ID)

	cwd, release, err := w.workDir(rctx, wk)
	if err != nil {
		w.end(ctx, r, wk, notStarted(err.Error(), agent.NotStarted), nil, log)
		return
	}
	defer release()
	a, err := w.attempt(wk, cwd)
	if err != nil {
		w.end(ctx, r, wk, notStarted(err.Error(), agent.NotStarted), nil, log)
		return
	}
	g := &gate{w: w, wk: wk, runDir: a.Dir()}
	a.Gate = g
	out := newShipper(w, wk.ID, a.Dir())
	shipping, stopShipping := context.WithCancel(context.WithoutCancel(ctx))
	shipped := make(chan struct{})
	go func() { defer close(shipped); out.run(shipping) }()
	log.Info("running an attempt", "profile", wk.Profile.Name, "cwd", cwd)
	res, outcome := w.local.Run(rctx, a)
	stopShipping()
	<-shipped
	if a.Stopped != nil {
		// The Start could not be stored: the agent never started. The
		// attempt goes back to the queue, for this worker or another.
		log.Warn("could not start an attempt; it goes back to the queue", "err", a.Stopped)
		r.each(func(m jetstream.Msg) { _ = m.NakWithDelay(time.Second) })
		return
	}
	g.wait()
	out.flush(ctx)
	w.end(ctx, r, wk, finished{res, outcome}, out, log)
}

// A finished is how an attempt ended here.
type finished struct {
	res agent.Result
	out agent.Outcome
}

func notStarted(msg string, out agent.Outcome) finished {
	return finished{agent.Result{Success: false, ExitCode: -1, Error: msg, Summary: msg, Outcome: map[agent.Outcome]string{agent.Cancelled: "cancelled", agent.NotStarted: "not_started"}[out]}, out}
}

// settled handles an attempt delivered again, and reports whether that
// was all there was to do: an attempt already ended is acknowledged; one
// that had started on a worker that went silent is reported interrupted
// (never run again under its id). One that never started runs.
func (w *Worker) settled(ctx context.Context, r *run, wk remote.Work, log interface {
	Info(string, ...any)
}) bool {
	end, err := w.s.Last(ctx, wk.ID, remote.KindEnd)
	var start []byte
	if err == nil && end == nil {
		start, err = w.s.Last(ctx, wk.ID, remote.KindStart)
	}
	switch {
	case err != nil:
		// Not knowing whether it started, it must not start: later.
		r.each(func(m jetstream.Msg) { _ = m.NakWithDelay(time.Second) })
		return true
	case end != nil:
		r.each(func(m jetstream.Msg) { _ = m.Ack() })
		return true
	case start == nil:
		return false
	}
	var st remote.Start
	_ = json.Unmarshal(start, &st)
	msg := fmt.Sprintf("interrupted: worker %s stopped answering while the agent ran", st.Worker)
	log.Info("an attempt came back from a silent worker; reporting it interrupted", "worker", st.Worker)
	w.end(ctx, r, wk, finished{agent.Result{Error: msg, Summary: msg, ExitCode: -1}, agent.Interrupted}, nil, w.log)
	return true
}

// end publishes the End of attempt wk, trying again until it is stored
// (while the worker runs), then acknowledges its work.
func (w *Worker) end(ctx context.Context, r *run, wk remote.Work, f finished, out *shipper, log interface {
	Info(string, ...any)
}) {
	e := remote.End{Worker: w.cfg.Name, List: wk.List, Task: wk.Task, N: wk.N, Sub: wk.Sub,
		Outcome: remote.OutcomeName(f.out), Result: f.res}
	if out != nil {
		e.Stdout, e.Stderr = out.sent[0], out.sent[1]
	}
	data, _ := json.Marshal(e)
	r.setEnding()
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 2*time.Second) {
		dup, err := w.s.Publish(context.WithoutCancel(ctx), wk.ID, remote.KindEnd, data, wk.ID+".end", nil)
		if err == nil {
			if dup {
				log.Info("dropping this result: the attempt's end was recorded already (it was declared lost while this worker was silent)")
			}
			break
		}
		r.each(func(m jetstream.Msg) { _ = m.InProgress() })
		sleep(context.Background(), delay)
	}
	r.each(func(m jetstream.Msg) {
		for range 5 {
			if m.DoubleAck(context.WithoutCancel(ctx)) == nil {
				return
			}
			sleep(context.Background(), time.Second)
		}
	})
	log.Info("attempt ended", "outcome", e.Outcome, "success", f.res.Success)
}

// errLost stops an agent whose attempt another worker reported lost.
var errLost = errors.New("the attempt was declared lost while this worker was silent")

// keepAlive sends in-progress acknowledgements every third of the ack
// wait until ctx ends, and stops the attempt if a cancel for it is stored
// that the subscription did not bring, or if another worker reported it
// lost.
func (w *Worker) keepAlive(ctx context.Context, r *run, id string) {
	t := time.NewTicker(max(w.cfg.AckWait/3, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.each(func(m jetstream.Msg) { _ = m.InProgress() })
			if c, err := w.s.Last(ctx, id, remote.KindCancel); err == nil && c != nil {
				r.cancel(agent.ErrCancelled)
			}
			if e, err := w.s.Last(ctx, id, remote.KindEnd); err == nil && e != nil && !r.isEnding() {
				// Another worker reported it lost while this one was
				// silent: its coordinator runs it again; this agent stops.
				w.log.Warn("stopping an agent whose attempt was declared lost while this worker was silent", "remote", id)
				r.cancel(errLost)
			}
		}
	}
}

// attempt is wk as an agent.Attempt of this machine, to run in cwd: its
// run folder in the worker's state directory; TASKD_ROOT, TASKD_TASK_FILE
// the coordinator's, mapped (--dir-map); the transcript in the local run
// folder.
func (w *Worker) attempt(wk remote.Work, cwd string) (*agent.Attempt, error) {
	if !plainName(wk.ID) {
		return nil, fmt.Errorf("attempt id %q is not a plain name", wk.ID)
	}
	listDir := filepath.Join(w.attemptsDir(), wk.ID, "list")
	if err := os.MkdirAll(listDir, 0o700); err != nil {
		return nil, err
	}
	a := &agent.Attempt{
		ListDir: listDir, ListID: wk.List, TaskID: wk.Task, Parent: wk.Parent, N: wk.N, Step: wk.Step,
		Profile: wk.Profile.Config(), Prompt: wk.Prompt, Script: wk.Script, Cwd: cwd,
		Timeout: time.Duration(wk.Timeout), Resume: wk.Resume, Sub: wk.Sub, Fork: wk.Fork, Files: wk.Files, OutputMax: wk.OutputMax,
		Spec: task.Spec{Model: wk.Flags.Model, PermissionMode: wk.Flags.PermissionMode, Tools: wk.Flags.Tools,
			DisallowTools: wk.Flags.DisallowTools, SystemPrompt: wk.Flags.SystemPrompt},
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
	if plainName(id) {
		_ = os.RemoveAll(filepath.Join(w.attemptsDir(), id))
	}
}

// A gate publishes the Start before the agent starts (its error keeps the
// agent from starting) and the Started once it runs.
type gate struct {
	w      *Worker
	wk     remote.Work
	runDir string
	sent   sync.WaitGroup
}

func (g *gate) Enter(ctx context.Context) error {
	data, _ := json.Marshal(remote.Start{Worker: g.w.cfg.Name, At: time.Now().UTC()})
	_, err := g.w.s.Publish(ctx, g.wk.ID, remote.KindStart, data, "", nil)
	return err
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
			if _, err := g.w.s.Publish(context.Background(), g.wk.ID, remote.KindStarted, data, g.wk.ID+".started", nil); err == nil {
				return
			}
			sleep(context.Background(), delay)
		}
	}()
}

func (g *gate) Exited() {}

// wait waits until the Started is stored (or given up on).
func (g *gate) wait() { g.sent.Wait() }
