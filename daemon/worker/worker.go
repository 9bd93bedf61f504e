// Package worker is the worker's side of package remote: taskd worker
// pulls attempts from the work-queue stream of the profiles it serves,
// runs each with agent.Local — the same profile rules, environment
// allow-list (names only travel; values come from the worker's own
// environment), process groups, timeouts and results as on the
// coordinator's machine — keeps the attempt alive with in-progress
// acknowledgements while it runs, sends its output back as it grows and
// its end when it has ended, and only then acknowledges it.
//
// Contracts:
//
//   - A Start is stored before an agent starts. An attempt delivered again
//     (its worker went silent past the ack wait) that has a Start and no
//     End is reported interrupted, never run a second time under the same
//     id; the coordinator records it and runs a new attempt.
//   - An End is published with the message id <attempt>.end: one per
//     attempt. A late End of a worker that came back is dropped by the
//     server, and the worker logs it.
//   - A cancel from the coordinator stops the agent's process group, as a
//     cancel does on the coordinator's machine.
//   - One worker per state directory (a lock); a worker that starts kills
//     the agents a killed predecessor left there.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
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
	URL         string
	NATS        *config.NATS // credentials, TLS, prefix; may be nil
	Name        string       // how the worker names itself in what it reports
	Profiles    []string     // the profiles it serves
	Concurrency int          // agents at once
	DirMap      []Mapping    // the coordinators' paths on this machine
	State       string       // its own directory: attempts' run folders, clones
	AckWait     time.Duration
	Grace       time.Duration // between SIGTERM and SIGKILL
	MaxOutput   int64         // bytes of stdout and of stderr sent back per attempt
	Executable  string        // taskd, put first on the agents' PATH
	Home        string
}

// DefaultProfiles are the profiles a worker serves unless told otherwise:
// the built-in ones.
var DefaultProfiles = []string{"claude", "opencode", "codex", "exec"}

// DefaultMaxOutput bounds what is sent back of one attempt's stdout (and
// of its stderr): the rest stays in the worker's log, and the
// coordinator's log says it was cut.
const DefaultMaxOutput = 64 << 20

// ErrBusy is returned when another worker uses the state directory.
var ErrBusy = errors.New("another worker uses this state directory")

// Worker pulls attempts and runs them. Make it with New and run it with
// Run; it is used by Run's goroutines only.
type Worker struct {
	cfg   Config
	log   *slog.Logger
	local *agent.Local
	s     *remote.Streams
	slots chan struct{}

	mu      sync.Mutex      // protects running
	running map[string]*run // attempts being handled here, by id

	repoMu sync.Mutex // serialises clones and worktrees of one cache
}

// New returns a worker for cfg that logs to log.
func New(cfg Config, log *slog.Logger) *Worker {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	if len(cfg.Profiles) == 0 {
		cfg.Profiles = DefaultProfiles
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = cfg.NATS.AckWaitOr()
	}
	if cfg.Grace <= 0 {
		cfg.Grace = config.DefaultGrace
	}
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = DefaultMaxOutput
	}
	lc := &config.Config{Grace: cfg.Grace, Executable: cfg.Executable, Home: cfg.Home}
	return &Worker{
		cfg: cfg, log: log, local: agent.NewLocal(lc, log),
		slots: make(chan struct{}, cfg.Concurrency), running: map[string]*run{},
	}
}

// Run serves attempts until ctx ends; then it stops the agents it runs
// (their attempts are reported interrupted, and run again by their
// coordinators) and returns nil.
func (w *Worker) Run(ctx context.Context) error {
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
	w.sweep()
	nc, err := remote.Connect(w.cfg.URL, w.cfg.NATS, "taskd worker "+w.cfg.Name, w.cfg.Home, w.log)
	if err != nil {
		return err
	}
	defer nc.Close()
	waitLog := func(err error) { w.log.Warn("waiting for the NATS server", "url", w.cfg.URL, "err", err) }
	s, err := remote.OpenStreams(ctx, nc, w.cfg.NATS.PrefixOr(), waitLog)
	if err != nil {
		return nil // stopped before the server was reached
	}
	w.s = s
	cancels, err := nc.Subscribe(s.Prefix+".run.*.cancel", w.onCancel)
	if err != nil {
		return fmt.Errorf("subscribe to cancels: %w", err)
	}
	defer cancels.Unsubscribe()

	// Agents stop when the worker says so (with ErrInterrupted), not when
	// ctx ends, so that their attempts are reported as interrupted.
	runCtx, stopAll := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopAll(agent.ErrInterrupted)
	var pulls, jobs sync.WaitGroup
	for _, p := range w.cfg.Profiles {
		pulls.Add(1)
		go func() {
			defer pulls.Done()
			w.pull(ctx, runCtx, p, &jobs)
		}()
	}
	w.log.Info("taskd worker started", "url", nc.ConnectedUrlRedacted(), "profiles", w.cfg.Profiles, "concurrency", w.cfg.Concurrency, "name", w.cfg.Name,
		"supervision", proc.Supervise().Mode().String())
	<-ctx.Done()
	pulls.Wait()
	stopAll(agent.ErrInterrupted)
	jobs.Wait()
	w.log.Info("taskd worker stopped")
	return nil
}

// pull takes attempts of profile from its consumer while there is a free
// slot, until ctx ends; each runs in a goroutine of jobs with runCtx.
func (w *Worker) pull(ctx, runCtx context.Context, profile string, jobs *sync.WaitGroup) {
	var cons jetstream.Consumer
	for ctx.Err() == nil {
		if cons == nil {
			c, err := w.consumer(ctx, profile)
			if err != nil {
				w.log.Debug("work consumer", "profile", profile, "err", err)
				sleep(ctx, time.Second)
				continue
			}
			cons = c
		}
		select {
		case w.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
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
			w.log.Debug("fetch work", "profile", profile, "err", err)
			if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrConsumerDeleted) {
				cons = nil
			}
			sleep(ctx, 250*time.Millisecond)
		}
	}
}

// consumer makes (or finds) the durable consumer every worker of profile
// shares: explicit acknowledgements, redelivery after the ack wait,
// without a limit on deliveries.
func (w *Worker) consumer(ctx context.Context, profile string) (jetstream.Consumer, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	p := w.s.Prefix
	return w.s.Work.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       remote.WorkConsumer(profile),
		FilterSubject: remote.WorkFilter(p, profile),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       w.cfg.AckWait,
		MaxDeliver:    -1,
		MaxAckPending: -1,
		Description:   "taskd workers of profile " + profile,
	})
}

// onCancel stops an attempt running here that its coordinator cancelled.
func (w *Worker) onCancel(m *nats.Msg) {
	id := remote.AttemptOfSubject(w.s.Prefix, m.Subject)
	w.mu.Lock()
	r := w.running[id]
	w.mu.Unlock()
	if r != nil {
		w.log.Info("cancelled by its coordinator", "attempt", id)
		r.cancel(agent.ErrCancelled)
	}
}

func (w *Worker) attemptsDir() string { return filepath.Join(w.cfg.State, "attempts") }

// sweep kills the agents a worker killed outright left in the state
// directory, and removes their folders: their attempts are delivered
// again, and reported interrupted.
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
		w.removeAttemptDir(e.Name())
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
