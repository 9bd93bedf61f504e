// Package remote sends agent runs to workers on other machines through a
// NATS server with JetStream, and is the coordinator's side of it: a
// job.Runner that, instead of starting an agent here, publishes the
// attempt, signed, to a work-queue stream (de-duplicated by its id),
// follows what the worker that claims it reports, and fills the run folder
// exactly as agent.Local does — the logs, the readable transcript and the
// progress of a streaming agent, result.json — so that the daemon's state
// writes, recovery, taskd logs, taskd status and everything else that
// reads run folders work unchanged. Package worker is the other side.
// wire.go is the wire format, sign.go the signatures; docs/distributed.md
// the manual.
//
// Contracts:
//
//   - Only the coordinator makes the streams and consumers of its prefix;
//     it makes them again whenever it finds them missing (every few
//     seconds, and on every reconnection), and publishes again, from the
//     run folder, an attempt the server lost that no worker holds.
//   - One coordinator per prefix: a lock in the pool bucket; a second one
//     stops with an error naming the first.
//   - The attempt's Gate is called as agent.Local calls it: Enter before the
//     attempt is published, Started when the worker reports its agent
//     started, Exited when it reports the end.
//   - cmd.json names the remote attempt, and keeps it (or work.json
//     does), before it is published, so that after a crash recovery
//     follows it (Reattach) instead of taking it for interrupted.
//   - Reports are taken only if signed by a trusted worker key, and of an
//     attempt only from the worker that claimed it. A worker is alive as
//     long as its heartbeats come; time the coordinator spends away from
//     the server counts against no worker. An attempt whose worker is
//     lost is recorded interrupted, and the worker told to stop it.
//   - While the daemon stops, an attempt a worker runs is left running
//     (job.Detached) and picked up again at the next start; a cancelled
//     task's attempt is stopped on its worker.
//   - A result for an attempt no task expects any more is dropped, with a
//     log line.
//   - While the server cannot be reached, attempts wait, and their task
//     files say why (metadata.taskd.dispatch).
package remote

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/job"
)

// Coordinator runs attempts on workers, and those of the profiles and
// lists named local on this machine. It is safe for concurrent use.
type Coordinator struct {
	cfg       *config.Config
	local     *agent.Local
	nc        *Conn
	url       string
	prefix    string
	log       *slog.Logger
	locals    []string // profiles and lists that stay on this machine
	signer    *Signer
	trust     Trust
	lostAfter time.Duration

	streamsReady chan struct{} // closed once the streams are made and the lock held
	streams      *Streams
	pool         *pool
	lock         *lock

	stop context.CancelFunc // ends the goroutines of the coordinator
	wg   sync.WaitGroup

	failed   chan struct{} // closed when the coordinator cannot go on
	failErr  error
	failOnce sync.Once

	forgets chan string // attempts whose record in the runs stream is to be forgotten

	mu     sync.Mutex          // protects the fields below
	active map[string]struct{} // attempts being followed, by id
	ended  []string            // ids of attempts recently followed to their end, oldest first
}

var (
	_ job.Runner     = (*Coordinator)(nil)
	_ job.Reattacher = (*Coordinator)(nil)
)

// NewCoordinator connects to the NATS server at url (cfg.NATS for
// credentials, TLS, prefix, keys and the local list) and returns a runner
// that sends the attempts of cfg's daemon to workers, running those that
// stay local with local. When the server answers it waits until the
// prefix is its own, and fails if another coordinator holds it; when the
// server is away it does not wait: attempts wait for it instead, and Done
// is closed if another coordinator turns out to hold the prefix. Close
// releases it.
func NewCoordinator(url string, cfg *config.Config, local *agent.Local, log *slog.Logger) (*Coordinator, error) {
	n := cfg.NATS
	if n == nil {
		n = &config.NATS{}
	}
	if n.SigningKey == "" {
		return nil, errors.New("nats.signingKey is not set: the coordinator signs the attempts it sends. Make a key with `taskd keygen ~/.config/taskd/coordinator.nk`, set nats.signingKey to that file, and give the public key it prints to the workers (their nats.coordinatorKeys)")
	}
	signer, err := LoadSigner(expandHome(n.SigningKey, cfg.Home))
	if err != nil {
		return nil, err
	}
	if len(n.WorkerKeys) == 0 {
		return nil, errors.New("nats.workerKeys is empty: the coordinator takes reports only from the workers whose public keys it lists. Each worker logs its key when it starts (or run `taskd keygen FILE` for its nats.signingKey)")
	}
	trust, err := NewTrust("nats.workerKeys", n.WorkerKeys)
	if err != nil {
		return nil, err
	}
	prefix := n.PrefixOr()
	nc, err := Connect(Dial{URL: url, NATS: n, Name: "taskd coordinator " + cfg.Root, Inbox: CoordinatorInbox(prefix), Home: cfg.Home, Log: log})
	if err != nil {
		return nil, err
	}
	client, err := NewClient(nc, prefix, signer)
	if err != nil {
		nc.Close()
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	host, _ := os.Hostname()
	c := &Coordinator{
		cfg: cfg, local: local, nc: nc, url: url, prefix: prefix, log: log, locals: n.Local,
		signer: signer, trust: trust, lostAfter: n.LostAfterOr(),
		streamsReady: make(chan struct{}), forgets: make(chan string, maxForgets), stop: stop, failed: make(chan struct{}), active: map[string]struct{}{},
	}
	c.streams = newStreams(client, n.AckWaitOr())
	c.pool = newPool(c.streams, trust, c.lostAfter, log)
	c.lock = &lock{c: client, me: Lock{Host: host, Root: cfg.Root, PID: os.Getpid(), Key: signer.PublicKey(), Boot: newID()}}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.serve(ctx)
	}()
	if nc.IsConnected() {
		select {
		case <-c.streamsReady:
		case <-c.failed:
			c.Close()
			return nil, c.failErr
		case <-time.After(lockStale + 3*requestTimeout):
		}
	}
	return c, nil
}

// serve makes the streams, takes the prefix's lock, and then keeps both:
// it makes again what the server lost and renews the lock, until ctx
// ends.
func (c *Coordinator) serve(ctx context.Context) {
	wait := c.waitingFor("make the streams")
	for {
		_, err := c.streams.Ensure(ctx)
		if err == nil {
			break
		}
		wait(err)
		if sleep(ctx, time.Second); ctx.Err() != nil {
			return
		}
	}
	if err := c.lock.acquire(ctx); err != nil {
		if errors.Is(err, ErrPrefixTaken) {
			c.fail(err)
		}
		return
	}
	for _, p := range c.remoteProfiles() {
		if err := c.streams.EnsureConsumer(ctx, p, nil); err != nil {
			c.log.Warn("cannot make a work consumer yet", "profile", p, "err", err)
		}
	}
	close(c.streamsReady)
	c.log.Info("dispatching agent runs to workers", "url", c.nc.ConnectedUrlRedacted(), "prefix", c.prefix,
		"key", c.signer.PublicKey(), "workers", len(c.trust), "local", c.locals)
	c.wg.Add(3)
	go func() { defer c.wg.Done(); c.pool.run(ctx) }()
	go func() { defer c.wg.Done(); c.forgetting(ctx) }()
	go func() { defer c.wg.Done(); c.watchEnds(ctx) }()
	c.maintain(ctx)
}

// maintain renews the lock and makes again the streams the server lost,
// every lockRefresh and at once after a reconnection, until ctx ends.
func (c *Coordinator) maintain(ctx context.Context) {
	t := time.NewTicker(lockRefresh)
	defer t.Stop()
	wait := c.waitingFor("keep the streams")
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.nc.Reconnected():
			c.streams.unsure()
		}
		if !c.nc.IsConnected() {
			continue
		}
		made, err := c.streams.Ensure(ctx)
		if made {
			c.log.Warn("made the streams again: the NATS server lost them; attempts it lost are published again", "prefix", c.prefix)
		}
		if err != nil {
			wait(err)
			continue
		}
		if err := c.lock.renew(ctx); errors.Is(err, ErrPrefixTaken) {
			c.fail(err)
			return
		} else if err != nil {
			wait(err)
		}
	}
}

// remoteProfiles are the profiles whose attempts go to workers.
func (c *Coordinator) remoteProfiles() []string {
	var out []string
	for name := range c.cfg.Profiles {
		if !slices.Contains(c.locals, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// fail records that the coordinator cannot go on, and why.
func (c *Coordinator) fail(err error) {
	c.failOnce.Do(func() {
		c.failErr = err
		c.log.Error("the coordinator stops", "err", err)
		close(c.failed)
	})
}

// Done is closed when the coordinator cannot go on (another coordinator
// holds its prefix); Err then says why.
func (c *Coordinator) Done() <-chan struct{} { return c.failed }

// Err is why the coordinator cannot go on, once Done is closed.
func (c *Coordinator) Err() error {
	select {
	case <-c.failed:
		return c.failErr
	default:
		return nil
	}
}

// Close stops following attempts and closes the connection.
func (c *Coordinator) Close() {
	c.stop()
	c.wg.Wait()
	c.nc.Close()
}

// waitingFor returns a function that logs, at most every half minute,
// that the coordinator waits for the server to do what, and why.
func (c *Coordinator) waitingFor(what string) func(error) {
	var last time.Time
	return func(err error) {
		if time.Since(last) > 30*time.Second {
			last = time.Now()
			c.log.Warn("waiting for the NATS server", "do", what, "url", c.url, "err", c.nc.Explain(err))
		}
	}
}

// ready returns the streams once they are made and the lock held, or nil
// when ctx ends first.
func (c *Coordinator) ready(ctx context.Context) *Streams {
	select {
	case <-c.streamsReady:
		return c.streams
	default:
	}
	select {
	case <-c.streamsReady:
		return c.streams
	case <-ctx.Done():
		return nil
	}
}

// closedContext is a context that has ended: ready(closedContext) returns
// the streams only if they are ready already.
var closedContext = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// isLocal reports whether attempt a runs on this machine: its profile or
// its list is named in nats.local.
func (c *Coordinator) isLocal(a *agent.Attempt) bool {
	return slices.Contains(c.locals, a.Profile.Name) || slices.Contains(c.locals, a.ListID)
}

// follow records that attempt id is being followed; the function it
// returns records that it no longer is.
func (c *Coordinator) follow(id string) (done func()) {
	c.mu.Lock()
	c.active[id] = struct{}{}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.active, id)
		c.ended = append(c.ended, id)
		if len(c.ended) > maxEnded {
			c.ended = c.ended[len(c.ended)-maxEnded:]
		}
		c.mu.Unlock()
	}
}

// maxEnded bounds the ids of ended attempts the coordinator remembers, to
// tell an End it has just recorded from one nobody expects.
const maxEnded = 4096

// followed reports whether attempt id is being followed, or was lately.
func (c *Coordinator) followed(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.active[id]
	return ok || slices.Contains(c.ended, id)
}

// newID returns a new attempt id: 20 random letters and digits. It is
// random, not derived from the task, so that a task dropped again with
// the same attempt numbers never meets the reports of an earlier run, and
// a worker cannot guess the id of an attempt it was not given.
func newID() string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 20)
	rand.Read(b)
	for i := range b {
		b[i] = digits[int(b[i])%len(digits)]
	}
	return string(b)
}

// NewBoot returns a new random id for a process's run (Heartbeat.Boot).
func NewBoot() string { return newID() }
