// Package worker is the worker's side of package remote: taskd worker
// binds to the work consumers the coordinator made for the profiles it
// serves and the labels it has, pulls attempts, checks that its
// coordinator signed them, claims each (a Start, stored before anything
// else: of two workers the first wins), and runs it with agent.Local and
// the profile of its own configuration that the attempt names — the same
// environment allow-list (names only travel; values come from the
// worker's own environment), process groups, timeouts and results as on
// the coordinator's machine. It sends the agent's output back as it
// grows and its end when it has ended, everything signed with its own
// key, and says every heartbeat interval that it is alive and what it
// holds.
//
// Contracts:
//
//   - A worker makes no stream or consumer, and reads nothing of the
//     streams but its consumers' messages and the claims and cancels of
//     the attempts it takes: its permissions need no more
//     (docs/distributed.md).
//   - No command line travels: an attempt names a profile, and a worker
//     runs only work its coordinator signed, of profiles it serves and
//     defines.
//   - An attempt is acknowledged (taken off the queue) once its claim is
//     stored; from then on its worker's heartbeat, not an ack deadline,
//     says it is alive. An attempt claimed by another worker is left to
//     it.
//   - An End is published with the message id <attempt>.end: one per
//     attempt.
//   - A cancel from the coordinator stops the agent's process group, as a
//     cancel does on the coordinator's machine.
//   - Stopping (SIGTERM, taskd worker --drain) drains: nothing new is
//     taken, what runs finishes, until the drain timeout; what still runs
//     then is stopped and reported interrupted.
//   - One worker per state directory (a lock); a worker that starts kills
//     the agents a killed predecessor left there.
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
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/internal/proc"
)

// Config is how a worker runs.
type Config struct {
	URL          string
	NATS         *config.NATS               // credentials, TLS, prefix, keys; may be nil
	Name         string                     // how the worker names itself in what it reports
	Profiles     []string                   // the profiles it serves
	Defined      map[string]*config.Profile // the profiles its configuration defines (built-in ones included)
	Labels       []string                   // what it has, for tasks that ask (metadata.taskd.labels)
	Concurrency  int                        // agents at once
	DirMap       []Mapping                  // the coordinators' paths on this machine
	State        string                     // its own directory: attempts' run folders, clones, its key
	Heartbeat    time.Duration              // how often it says it is alive
	Grace        time.Duration              // between SIGTERM and SIGKILL
	DrainTimeout time.Duration              // how long a stopping worker lets its agents finish
	MaxOutput    int64                      // bytes of stdout and of stderr sent back per attempt
	Executable   string                     // taskd, put first on the agents' PATH
	Home         string
	Version      string
}

// DefaultProfiles are the profiles a worker serves unless told otherwise:
// the built-in ones (those of the kinds package agent registers).
var DefaultProfiles = config.BuiltinProfiles()

// DefaultMaxOutput bounds what is sent back of one attempt's stdout (and
// of its stderr): the rest stays in the worker's log, and the
// coordinator's log says it was cut.
const DefaultMaxOutput = 64 << 20

// DefaultDrainTimeout is how long a stopping worker lets its agents
// finish unless told otherwise.
const DefaultDrainTimeout = 10 * time.Minute

// ErrBusy is returned when another worker uses the state directory.
var ErrBusy = errors.New("another worker uses this state directory")

// Worker pulls attempts and runs them. Make it with New and run it with
// Run.
type Worker struct {
	cfg     Config
	log     *slog.Logger
	local   *agent.Local
	c       *remote.Client
	trust   remote.Trust // the coordinators' keys
	boot    string
	host    string
	slots   chan struct{}
	stopNow chan struct{} // closed by Stop
	stopped sync.Once

	hbSeq    atomic.Uint64 // the last heartbeat published
	draining atomic.Bool

	mu      sync.Mutex          // protects the fields below
	running map[string]*run     // attempts being handled here, by id
	ended   []string            // attempts ended here lately, oldest first
	pulling map[string]struct{} // consumers being pulled from, by name

	repoMu sync.Mutex // serialises clones and worktrees of one cache

	lists   chan string   // list directories ended attempts left empty (takeList)
	listSeq atomic.Uint64 // the last list directory made
}

// New returns a worker for cfg that logs to log.
func New(cfg Config, log *slog.Logger) *Worker {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	if len(cfg.Profiles) == 0 {
		cfg.Profiles = DefaultProfiles
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = cfg.NATS.HeartbeatOr()
	}
	if cfg.Grace <= 0 {
		cfg.Grace = config.DefaultGrace
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = DefaultMaxOutput
	}
	lc := &config.Config{Grace: cfg.Grace, Executable: cfg.Executable, Home: cfg.Home}
	host, _ := os.Hostname()
	return &Worker{
		cfg: cfg, log: log, local: agent.NewLocal(lc, log), boot: remote.NewBoot(), host: host,
		slots: make(chan struct{}, cfg.Concurrency), stopNow: make(chan struct{}),
		running: map[string]*run{}, pulling: map[string]struct{}{}, lists: make(chan string, cfg.Concurrency),
	}
}

// Check checks what the worker will serve against what it defines, and
// its keys, before it connects: errors a person must fix.
func (w *Worker) Check() error {
	for _, p := range w.cfg.Profiles {
		if w.cfg.Defined[p] == nil {
			return fmt.Errorf("profile %q is not defined here: a worker runs only profiles of its own configuration (built-in: claude, opencode, codex, exec; others under \"profiles\" in the file given with --config)", p)
		}
	}
	if err := remote.CheckLabels(w.cfg.Labels); err != nil {
		return fmt.Errorf("--label: %w", err)
	}
	n := w.cfg.NATS
	if n == nil || len(n.CoordinatorKeys) == 0 {
		return errors.New("nats.coordinatorKeys is empty: a worker runs only attempts signed by a coordinator it trusts. Put the public key the coordinator's `taskd keygen` printed in the nats section of the file given with --config")
	}
	trust, err := remote.NewTrust("nats.coordinatorKeys", n.CoordinatorKeys)
	w.trust = trust
	return err
}

// Stop makes a draining worker stop what still runs now, without waiting
// for the drain timeout (a second SIGTERM).
func (w *Worker) Stop() { w.stopped.Do(func() { close(w.stopNow) }) }

// Run serves attempts until ctx ends; then it drains: it takes nothing
// new, lets what runs finish (for the drain timeout at most, or until
// Stop), stops what still runs (reported interrupted, and run again by
// its coordinator) and returns nil.
func (w *Worker) Run(ctx context.Context) error {
	if err := w.Check(); err != nil {
		return err
	}
	if err := os.MkdirAll(w.attemptsDir(), 0o700); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	lock, err := fsroot.OpenRegular(filepath.Join(w.cfg.State, "worker.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	defer lock.Close() // releases the flock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("%s: %w", w.cfg.State, ErrBusy)
	}
	_ = fsroot.WriteFile(w.cfg.State, filepath.Join(w.cfg.State, "worker.pid"), []byte(strconv.Itoa(os.Getpid())+"\n"))
	defer os.Remove(filepath.Join(w.cfg.State, "worker.pid"))
	w.sweep()
	signer, err := w.signer()
	if err != nil {
		return err
	}
	prefix := w.cfg.NATS.PrefixOr()
	nc, err := remote.Connect(remote.Dial{URL: w.cfg.URL, NATS: w.cfg.NATS, Name: "taskd worker " + w.cfg.Name, Inbox: remote.WorkerInbox(prefix, w.cfg.Name), Home: w.cfg.Home, Log: w.log})
	if err != nil {
		return err
	}
	defer nc.Close()
	if w.c, err = remote.NewClient(nc, prefix, signer); err != nil {
		return err
	}
	cancels, err := nc.Subscribe(prefix+".run.*."+remote.KindCancel, w.onCancel)
	if err != nil {
		return fmt.Errorf("subscribe to cancels: %w", err)
	}
	defer cancels.Unsubscribe()

	// Agents stop when the worker says so (with ErrInterrupted), not when
	// ctx ends, so that their attempts are reported as interrupted.
	runCtx, stopAll := context.WithCancelCause(context.Background())
	defer stopAll(agent.ErrInterrupted)
	hbCtx, stopBeats := context.WithCancel(context.Background())
	beats := make(chan struct{})
	go func() { defer close(beats); w.beat(hbCtx) }()
	var pulls, jobs sync.WaitGroup
	pulls.Add(1)
	go func() { defer pulls.Done(); w.discover(ctx, runCtx, &pulls, &jobs) }()
	w.log.Info("taskd worker started", "url", nc.ConnectedUrlRedacted(), "name", w.cfg.Name, "key", signer.PublicKey(),
		"profiles", w.cfg.Profiles, "labels", w.cfg.Labels, "concurrency", w.cfg.Concurrency, "supervision", proc.Supervise().Mode().String())
	<-ctx.Done()
	w.draining.Store(true)
	pulls.Wait()
	w.drain(&jobs, stopAll)
	stopBeats()
	<-beats
	w.lastBeat()
	w.log.Info("taskd worker stopped")
	return nil
}

// drain waits for the attempts that run to end, for the drain timeout at
// most or until Stop; then it stops what still runs.
func (w *Worker) drain(jobs *sync.WaitGroup, stopAll context.CancelCauseFunc) {
	done := make(chan struct{})
	go func() { jobs.Wait(); close(done) }()
	if n := w.held(); n > 0 {
		w.log.Info("draining: taking no new attempt; waiting for those that run", "attempts", n, "timeout", w.cfg.DrainTimeout)
	}
	t := time.NewTimer(w.cfg.DrainTimeout)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
		w.log.Warn("drain timeout: stopping the agents that still run; their coordinators run them again", "attempts", w.held())
	case <-w.stopNow:
		w.log.Warn("stopping the agents that still run; their coordinators run them again", "attempts", w.held())
	}
	stopAll(agent.ErrInterrupted)
	<-done
}

// signer is the worker's key: nats.signingKey, or one it makes in its
// state directory.
func (w *Worker) signer() (*remote.Signer, error) {
	path := filepath.Join(w.cfg.State, "worker.nk")
	if n := w.cfg.NATS; n != nil && n.SigningKey != "" {
		return remote.LoadSigner(expandHome(n.SigningKey, w.cfg.Home))
	}
	pub, made, err := remote.Keygen(path)
	if err != nil {
		return nil, fmt.Errorf("the worker's key: %w", err)
	}
	if made {
		w.log.Info("made this worker's key; add its public key to the coordinator's nats.workerKeys", "key", pub, "path", path)
	}
	return remote.LoadSigner(path)
}

// discover binds, every few seconds until ctx ends, to the work consumers
// the coordinator made that this worker can serve: of a profile it serves,
// asking only for labels it has. Each is pulled from in a goroutine of
// pulls; attempts run in goroutines of jobs with runCtx.
func (w *Worker) discover(ctx, runCtx context.Context, pulls, jobs *sync.WaitGroup) {
	waited := false
	for delay := 100 * time.Millisecond; ctx.Err() == nil; delay = min(2*delay, 2*time.Second) {
		names, err := w.consumerNames(ctx)
		if err != nil && !waited && ctx.Err() == nil {
			w.log.Warn("waiting for the coordinator's work consumers", "err", err)
			waited = true
		}
		for _, name := range names {
			if !w.serves(name) {
				continue
			}
			w.mu.Lock()
			_, on := w.pulling[name]
			if !on {
				w.pulling[name] = struct{}{}
			}
			w.mu.Unlock()
			if on {
				continue
			}
			waited, delay = false, 100*time.Millisecond
			pulls.Add(1)
			go func() {
				defer pulls.Done()
				w.pull(ctx, runCtx, name, jobs)
				w.mu.Lock()
				delete(w.pulling, name)
				w.mu.Unlock()
			}()
		}
		sleep(ctx, delay)
	}
}

// serves reports whether the consumer called name is one this worker
// pulls from.
func (w *Worker) serves(name string) bool {
	token, labels, ok := remote.ParseWorkConsumer(name)
	if !ok {
		return false
	}
	for _, p := range w.cfg.Profiles {
		if remote.Token(p) == token {
			for _, l := range labels {
				if !slices.Contains(w.cfg.Labels, l) {
					return false
				}
			}
			return true
		}
	}
	return false
}

// consumerNames lists the consumers of the work stream.
func (w *Worker) consumerNames(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	subject := "$JS.API.CONSUMER.NAMES." + remote.WorkStream(w.c.Prefix)
	var names []string
	for offset := 0; ; {
		req, _ := json.Marshal(map[string]int{"offset": offset})
		m, err := w.c.Conn.RequestWithContext(ctx, subject, req)
		if err != nil {
			return nil, w.c.Conn.Explain(fmt.Errorf("list the work consumers: %w", err))
		}
		var resp struct {
			Total     int      `json:"total"`
			Consumers []string `json:"consumers"`
			Error     *struct {
				Description string `json:"description"`
			} `json:"error"`
		}
		if err := json.Unmarshal(m.Data, &resp); err != nil {
			return nil, fmt.Errorf("list the work consumers: %w", err)
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("list the work consumers: %s (the coordinator makes the stream)", resp.Error.Description)
		}
		names = append(names, resp.Consumers...)
		offset += len(resp.Consumers)
		if len(resp.Consumers) == 0 || offset >= resp.Total {
			return names, nil
		}
	}
}

// pull takes attempts from consumer name while there is a free slot,
// until ctx ends or the consumer is gone; each runs in a goroutine of
// jobs with runCtx.
func (w *Worker) pull(ctx, runCtx context.Context, name string, jobs *sync.WaitGroup) {
	bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	cons, err := w.c.JS.Consumer(bctx, remote.WorkStream(w.c.Prefix), name)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			w.log.Debug("bind to a work consumer", "consumer", name, "err", w.c.Conn.Explain(err))
		}
		return
	}
	w.log.Debug("pulling attempts", "consumer", name)
	for ctx.Err() == nil {
		select {
		case w.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
		got := false
		if err == nil {
			for m := range batch.Messages() {
				got = true
				jobs.Add(1)
				go func() {
					defer jobs.Done()
					defer func() { <-w.slots }()
					w.handle(runCtx, m)
				}()
			}
			err = batch.Error()
		}
		if !got {
			<-w.slots
		}
		if err != nil && !errors.Is(err, nats.ErrTimeout) && ctx.Err() == nil {
			if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrConsumerDeleted) ||
				errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) {
				w.log.Info("a work consumer is gone; waiting for the coordinator to make it again", "consumer", name, "err", err)
				return
			}
			w.log.Debug("fetch work", "consumer", name, "err", w.c.Conn.Explain(err))
			sleep(ctx, 250*time.Millisecond)
		}
	}
}

// onCancel stops an attempt running here that its coordinator cancelled,
// or recorded lost.
func (w *Worker) onCancel(m *nats.Msg) {
	id := remote.AttemptOfSubject(w.c.Prefix, m.Subject)
	w.mu.Lock()
	r := w.running[id]
	w.mu.Unlock()
	if r != nil {
		w.cancelled(r, id, m.Subject, m.Header, m.Data)
	}
}

// cancelled stops run r for the cancel published on subject, if its
// coordinator signed it.
func (w *Worker) cancelled(r *run, id, subject string, hdr nats.Header, data []byte) {
	if _, err := w.trust.Verify(subject, hdr, data); err != nil {
		w.log.Warn("ignoring a cancel", "remote", id, "err", err)
		return
	}
	var c remote.Cancel
	_ = json.Unmarshal(data, &c)
	if c.Reason == remote.LostReason {
		if r.cancel(errLost) {
			w.log.Warn("stopping an agent whose attempt its coordinator recorded lost (its log says why: this worker silent too long, restarted, or sharing its key with another)", "remote", id)
		}
		return
	}
	if r.cancel(agent.ErrCancelled) {
		w.log.Info("cancelled by its coordinator", "remote", id)
	}
}

func (w *Worker) attemptsDir() string { return filepath.Join(w.cfg.State, "attempts") }

// sweep kills the agents a worker killed outright left in the state
// directory, and removes their folders: their coordinators record them
// lost when they see this worker's new heartbeat.
func (w *Worker) sweep() {
	runs, _ := filepath.Glob(filepath.Join(w.attemptsDir(), "*", "list", ".taskd", "runs", "*", "*"))
	subs, _ := filepath.Glob(filepath.Join(w.attemptsDir(), "*", "list", ".taskd", "runs", "*", "*", "*"))
	for _, dir := range append(runs, subs...) {
		if agent.KillLeftover(dir) {
			w.log.Info("killed an agent a previous worker left running", "path", dir)
		}
	}
	entries, _ := fsroot.ReadDirectory(w.attemptsDir())
	for _, e := range entries {
		if isListDir(e.Name()) {
			_ = os.RemoveAll(filepath.Join(w.attemptsDir(), e.Name()))
			continue
		}
		w.removeAttemptDir(e.Name())
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func expandHome(p, home string) string {
	if len(p) > 1 && p[:2] == "~/" && home != "" {
		return filepath.Join(home, p[2:])
	}
	return p
}
