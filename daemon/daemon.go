package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/taskd/taskd/daemon/admit"
	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/catalog"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/held"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/notify"
	"github.com/taskd/taskd/daemon/parallel"
	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/daemon/slots"
	"github.com/taskd/taskd/internal/clock"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/internal/proc"
	"github.com/taskd/taskd/taskfile"
)

// Daemon watches a root of task lists and runs the tasks addressed to it.
// Create it with New and start it with Run.
//
// One goroutine (Run's) owns the scheduling state: the lists, what it last
// saw of each task file, which task has a job. Tasks are worked on by job
// goroutines that read and write task files through taskfile and report
// back on a channel; of the loop's state they touch only the concurrency
// slots, under their own mutex (slots.go).
type Daemon struct {
	cfg   *config.Config
	log   *slog.Logger
	clock clock.Clock // what the loop decides with: clock.Real unless an Option says otherwise
	// lastNow is the clock's time the loop last saw: a later time before
	// it is a clock set back (clockBack).
	lastNow time.Time

	lists map[string]*list // by list id; loop goroutine only
	order []string         // list ids in the order they are served
	next  int              // round-robin position in order

	// slots counts the concurrency slots; its tickets change hands
	// outside the loop (package slots).
	slots *slots.Pool
	// kick asks the loop to schedule again: a slot changed hands outside
	// it. Buffered; a kick already waiting is enough.
	kick chan struct{}

	watcher *fsnotify.Watcher
	jobs    sync.WaitGroup
	live    int  // jobs started and not yet reported (loop goroutine only)
	settled bool // "taskd idle" was logged: the start's work is done
	done    chan jobDone
	ctx     context.Context // Run's context; jobs derive theirs from it

	// fullScan asks the loop for a rescan of every list (watcher overflow,
	// safety timer).
	fullScan bool
	// pausesChanged asks the loop to read the root's pause file again
	// (taskd resume, pauses.go).
	pausesChanged bool
	// holdsSeen are the pauses of persons and budgets last read, and
	// stoppedFor, by scope, the start of the last pause whose stop was
	// applied (holds.go).
	holdsSeen  map[pausefile.Scope]pausefile.Pause
	stoppedFor map[pausefile.Scope]time.Time

	catalog *catalog.Catalog // each list's workflows and command files
	env     *job.Env         // what every job may use
	held    *held.Registry   // the tasks held while a write fails
	runner  job.Runner       // runs agents: agent.Local unless an Option says otherwise

	pauses *job.Pauses      // agent profiles paused by a usage limit (shared with jobs)
	admit  *admit.Admission // lists' and profiles' windows and budgets (admission.go)
	// parallel is the root's parallel file as last read (nil: not yet);
	// parallelErr the last failure to read it, reported once.
	parallel    atomic.Pointer[parallel.Record]
	parallelErr string
	notifier    *notify.Notifier // tells a person of tasks that need them (nil: nobody)
	chores      sync.WaitGroup   // background work besides jobs (removing worktrees)
	removing    sync.Map         // worktrees being removed, by path
	leftAs      sync.Map         // worktrees left where they are, by path: the refusal reported

	// started is closed once the startup scan is complete (for tests and
	// for taskd run's ready message).
	started chan struct{}

	// background counts goroutines besides jobs that Run waits for
	// (retention); retaining is set while a retention pass runs.
	background sync.WaitGroup
	retaining  atomic.Bool
}

// An Option changes how New makes a daemon.
type Option func(*Daemon)

// WithRunner makes the daemon run agents with r instead of on this machine
// (package remote's coordinator, for one).
func WithRunner(r job.Runner) Option { return func(d *Daemon) { d.runner = r } }

// WithClock makes the daemon decide by c: when tasks may start (a
// notBefore, a schedule's times, windows of hours, a pause's end) and when
// its loop wakes for them.
func WithClock(c clock.Clock) Option { return func(d *Daemon) { d.clock = c } }

// New returns a daemon for cfg that logs to log.
func New(cfg *config.Config, log *slog.Logger, opts ...Option) *Daemon {
	d := &Daemon{
		cfg:     cfg,
		log:     log,
		lists:   map[string]*list{},
		done:    make(chan jobDone),
		kick:    make(chan struct{}, 1),
		started: make(chan struct{}),
		clock:   clock.Real,

		stoppedFor: map[pausefile.Scope]time.Time{},
	}
	d.slots = slots.New(cfg.Concurrency, d.listLimit, d.kickLoop)
	d.slots.SetProfileLimits(d.profileLimit)
	d.admit = admit.New(cfg)
	d.runner = agent.NewLocal(cfg, log)
	for _, o := range opts {
		o(d)
	}
	d.catalog = catalog.New(cfg.Dir, log)
	d.held = held.New(cfg.Root, func(err error) { log.Warn("held tasks are not shown to taskd status", "err", err) })
	d.pauses = job.NewPauses(cfg.Root, d.profileAgents, func(err error) { log.Warn("pause file", "err", err) })
	d.env = &job.Env{Config: cfg, Runner: d.runner, Catalog: d.catalog, Log: log, Held: d.held, Pauses: d.pauses, Clock: d.clock}
	return d
}

// Started is closed once the daemon has taken its lock, added its watches
// and scanned every list.
func (d *Daemon) Started() <-chan struct{} { return d.started }

// Run runs the daemon until ctx is done. It takes the root's daemon lock
// (failing with ErrAlreadyRunning if another daemon has it), refuses a root
// writable by others unless cfg.Insecure, adds its watches, scans and
// recovers every list, and then serves file events. When ctx ends it stops
// running agents (SIGTERM, then SIGKILL after the grace period), records
// them as interrupted so the next start runs them again, and returns nil.
func (d *Daemon) Run(ctx context.Context) error {
	root := d.cfg.Root
	if err := ensureRoot(root); err != nil {
		return err
	}
	if !d.cfg.Insecure {
		if err := fsroot.CheckPrivate(root); err != nil {
			return err
		}
	}
	lock, err := lockRoot(root)
	if err != nil {
		return err
	}
	defer lock.Close()
	d.held.RemoveLeft() // the status file a killed daemon left for root
	if err := agent.ForgetRemovedLists(root); err != nil {
		d.log.Warn("results kept for lists removed while no daemon ran", "err", err)
	}

	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", root, err)
	}
	d.watcher = w
	defer w.Close()
	// Jobs stop when the daemon says so (shutdown, with errInterrupted), not
	// when ctx ends: the cause tells an agent killed for a stop from one
	// cancelled by its task.
	runCtx, stopJobs := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopJobs(agent.ErrInterrupted)
	d.ctx = runCtx

	// Watches first, then the scan: a file created in between is seen by
	// both, never by neither.
	if err := w.Add(root); err != nil {
		return fmt.Errorf("watch %s: %w", root, err)
	}
	d.readParallel()
	d.syncPauses() // the pauses a daemon before this one recorded
	d.addLists()
	for _, id := range d.order {
		d.scanList(d.lists[id])
	}
	// The scan parsed every task file and kept a few fields of each: give
	// the rest back to the system now, not whenever the runtime gets to
	// it, since the daemon may idle for hours.
	debug.FreeOSMemory()
	d.log.Info("taskd started", "root", root, "lists", len(d.lists), "concurrency", d.cfg.Concurrency, "supervision", proc.Supervise().Mode().String())
	close(d.started)

	d.notifier = notify.New(d.cfg.Notify, d.log)
	err = d.loop(ctx)
	d.shutdown(stopJobs)
	d.background.Wait()
	d.chores.Wait()
	d.notifier.Close()
	return err
}

// loop serves events until ctx ends.
func (d *Daemon) loop(ctx context.Context) error {
	rescan := time.NewTimer(d.cfg.Rescan)
	defer rescan.Stop()
	wake := d.clock.NewTimer(time.Hour)
	defer wake.Stop()
	retain := time.NewTicker(retainEvery)
	defer retain.Stop()
	d.retain()
	for {
		d.clockBack()
		d.schedule()
		d.logSettled()
		wake.Reset(d.nextWake())
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-d.watcher.Events:
			if !ok {
				return errors.New("file watcher closed")
			}
			d.handleEvent(ev)
			d.drainEvents()
		case err, ok := <-d.watcher.Errors:
			if !ok {
				return errors.New("file watcher closed")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				d.log.Warn("file events were lost; rescanning", "err", err)
			} else {
				d.log.Warn("file watcher", "err", err)
			}
			d.fullScan = true
		case msg := <-d.done:
			d.finished(msg)
		case <-d.kick:
			// A slot changed hands: schedule() starts what may start now.
		case <-rescan.C:
			d.fullScan = true
			rescan.Reset(d.cfg.Rescan)
		case <-wake.C():
			d.wakeDue()
		case <-retain.C:
			d.retain()
		}
		if d.fullScan {
			d.fullScan = false
			d.pausesChanged = true
			d.rescanAll()
		}
		d.flushDirty()
		if d.pausesChanged {
			d.pausesChanged = false
			d.syncPauses()
		}
	}
}

// logSettled logs, once, when the daemon first has nothing to do after
// its start: the tasks it found are recovered, started or left as they
// are, and no job runs. A person (or a test) knows the start's decisions
// are made.
func (d *Daemon) logSettled() {
	if d.settled || d.live > 0 {
		return
	}
	for _, l := range d.lists {
		if len(l.dirty) > 0 {
			return
		}
	}
	d.settled = true
	d.log.Debug("taskd idle: what the start found is handled, no job runs")
}

// drainEvents takes every event already queued, so a burst of changes is
// handled in one pass without delaying the first.
func (d *Daemon) drainEvents() {
	for range 4096 {
		select {
		case ev, ok := <-d.watcher.Events:
			if !ok {
				return
			}
			d.handleEvent(ev)
		default:
			return
		}
	}
}

// handleEvent records a file event as a hint: no file is read here.
func (d *Daemon) handleEvent(ev fsnotify.Event) {
	dir, name := filepath.Split(ev.Name)
	dir = filepath.Clean(dir)
	if ev.Op == fsnotify.Chmod {
		// Only a list directory's mode matters: whether it is served.
		if l := d.lists[name]; l != nil && dir == d.cfg.Root {
			d.checkListMode(l)
		}
		return
	}
	if dir == d.cfg.Root {
		if name == parallel.Name {
			d.readParallel() // taskd parallel changed a limit
			return
		}
		if name == pausefile.Name {
			d.pausesChanged = true // read in the loop (pauses.go)
			return
		}
		// Something changed at the root: a list appeared or went away.
		d.listChanged(name)
		return
	}
	l := d.lists[filepath.Base(dir)]
	if l == nil || filepath.Dir(dir) != d.cfg.Root {
		return
	}
	if id, ok := taskID(name); ok {
		// A write into the file in place (Claude Code's) leaves its inode
		// as it was: what the daemon wrote there last is no longer in it.
		l.dirty[id] = l.dirty[id] || ev.Has(fsnotify.Write)
	} else if id, ok := lockOf(name); ok {
		l.lockChanged(id) // a held task may be claimed now (settle.go)
	} else if name == area.Name {
		d.checkListMode(l) // .taskd replaced (by a link?)
	} else if _, _, bad := taskfile.Misnamed(name); bad {
		l.namesDirty = true
	}
}

// rescanAll re-reads every list and every task file in it.
func (d *Daemon) rescanAll() {
	d.addLists()
	files := 0
	for _, id := range d.order {
		l := d.lists[id]
		d.checkListMode(l)
		d.scanList(l)
		files += len(l.entries)
	}
	// What a rescan of many files read is garbage now: give it back to
	// the system at once, as after the startup scan, so that the daemon's
	// memory between rescans stays what it holds.
	if files >= freeAfterFiles {
		debug.FreeOSMemory()
	}
}

// freeAfterFiles is how many task files a rescan reads before its garbage
// is handed back to the system at its end (a forced collection, a few
// milliseconds per ten thousand files).
const freeAfterFiles = 10000

// flushDirty reconciles the task files events pointed at.
func (d *Daemon) flushDirty() {
	for _, id := range d.order {
		l := d.lists[id]
		for tid, inPlace := range l.dirty {
			delete(l.dirty, tid)
			if tf, ok := l.Dir.Own(tid, inPlace); ok {
				d.reconcile(l, tid, tf, nil) // the daemon's own write: known, not read
				continue
			}
			d.refresh(l, tid)
		}
		if l.namesDirty {
			l.namesDirty = false
			d.checkNames(l)
		}
	}
}

// nextWake returns when the loop must look again without an event: the
// earliest retry time, end of a profile's pause, time a task waits for
// (a notBefore, a schedule's next time, a window's opening), or re-check
// of a file that did not parse. Idle, it is far away; the safety rescan
// has its own timer.
func (d *Daemon) nextWake() time.Duration {
	next, found := time.Hour, false
	now := d.clock.Now()
	pauseEnd := d.pauses.Next(now) // a profile's pause ends: the tasks it held may start
	for _, l := range d.lists {
		for _, at := range []time.Time{l.nextRetry, l.nextRecheck, l.nextDue, pauseEnd} {
			if at.IsZero() {
				continue
			}
			// A time already past is due now; it must not count as unset.
			if w := at.Sub(now); !found || w < next {
				next, found = w, true
			}
		}
	}
	return max(next, 0) // the real clock's timers wait at least a millisecond
}

// shutdown stops every job and waits for them to record their state.
func (d *Daemon) shutdown(stopJobs context.CancelCauseFunc) {
	stopJobs(agent.ErrInterrupted)
	waited := make(chan struct{})
	go func() { d.jobs.Wait(); close(waited) }()
	for {
		select {
		case <-waited:
			for _, id := range d.order {
				l := d.lists[id]
				l.Events.Append(eventlog.Event{Type: eventlog.DaemonStopped, List: id})
				if err := l.Events.Close(); err != nil {
					d.log.Warn("close the event log", "list", id, "err", err)
				}
			}
			d.held.Close()
			d.log.Info("taskd stopped")
			return
		case msg := <-d.done:
			d.finished(msg)
		}
	}
}
