// Package remote sends agent runs to workers on other machines through a
// NATS server with JetStream, and is the coordinator's side of it: a
// job.Runner that, instead of starting an agent here, publishes the
// attempt to a work-queue stream (de-duplicated by its id), follows what
// the worker reports of it, and fills the run folder exactly as
// agent.Local does, so that the daemon's state writes, recovery, taskd
// logs and everything else that reads run folders work unchanged. Package
// worker is the other side. wire.go is the wire format; docs/distributed.md
// the manual.
//
// Contracts:
//
//   - The attempt's Gate is called as agent.Local calls it: Enter before the
//     attempt is published, Started when the worker reports its agent
//     started, Exited when it reports the end.
//   - cmd.json names the remote attempt before it is published, so that
//     after a crash recovery asks the streams what became of it
//     (Reattach) instead of taking it for interrupted.
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
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/job"
)

// Coordinator runs attempts on workers, and those of the profiles and
// lists named local on this machine. It is safe for concurrent use.
type Coordinator struct {
	cfg    *config.Config
	local  *agent.Local
	nc     *nats.Conn
	url    string
	prefix string
	log    *slog.Logger
	locals []string // profiles and lists that stay on this machine

	streamsReady chan struct{} // closed once streams is set
	streams      *Streams

	stop context.CancelFunc // ends the goroutines of the coordinator
	wg   sync.WaitGroup

	mu     sync.Mutex          // protects the fields below
	active map[string]struct{} // attempts being followed, by id
	ended  []string            // ids of attempts recently followed to their end, oldest first
}

var (
	_ job.Runner     = (*Coordinator)(nil)
	_ job.Reattacher = (*Coordinator)(nil)
)

// NewCoordinator connects to the NATS server at url (cfg.NATS for
// credentials, TLS, prefix and the local list) and returns a runner that
// sends the attempts of cfg's daemon to workers, running those that stay
// local with local. It does not wait for the server: attempts wait for it
// instead. Close releases it.
func NewCoordinator(url string, cfg *config.Config, local *agent.Local, log *slog.Logger) (*Coordinator, error) {
	nc, err := Connect(url, cfg.NATS, "taskd coordinator "+cfg.Root, cfg.Home, log)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	c := &Coordinator{
		cfg: cfg, local: local, nc: nc, url: url, prefix: cfg.NATS.PrefixOr(), log: log,
		streamsReady: make(chan struct{}), stop: stop, active: map[string]struct{}{},
	}
	if cfg.NATS != nil {
		c.locals = cfg.NATS.Local
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		s, err := OpenStreams(ctx, nc, c.prefix, c.waitingFor("open the streams"))
		if err != nil {
			return // closed before the server was reached
		}
		c.streams = s
		close(c.streamsReady)
		log.Info("dispatching agent runs to workers", "url", nc.ConnectedUrlRedacted(), "stream", workStream(c.prefix), "local", c.locals)
		c.watchEnds(ctx)
	}()
	return c, nil
}

// Close stops following attempts and closes the connection.
func (c *Coordinator) Close() {
	c.stop()
	c.wg.Wait()
	c.nc.Close()
}

// waitingFor returns a function that logs, at most every half minute,
// that the coordinator waits for the server to do what.
func (c *Coordinator) waitingFor(what string) func(error) {
	var last time.Time
	return func(err error) {
		if time.Since(last) > 30*time.Second {
			last = time.Now()
			c.log.Warn("waiting for the NATS server", "do", what, "url", c.url, "err", err)
		}
	}
}

// ready returns the streams once they are open, or nil when ctx ends
// first.
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
// the streams only if they are open already.
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

// errNotSent is the error of an attempt found never sent at recovery.
var errNotSent = errors.New("interrupted: the attempt never reached the NATS server")
