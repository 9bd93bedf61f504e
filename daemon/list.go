package daemon

import (
	"bytes"
	"errors"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/daemon/worktree"
	"github.com/taskd/taskd/internal/clock"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// A list is one task list directory as the loop sees it.
type list struct {
	*job.List
	entries map[string]*entry
	// waiters maps a task id to the tasks whose blockedBy names it, so a
	// blocker's change re-evaluates exactly its dependents.
	waiters    map[string]map[string]struct{}
	scanned    uint32          // scans of the list so far (entry.scanned)
	dirty      map[string]bool // ids events pointed at, to refresh: true if one was a write in place
	ready      []readyTask     // runnable tasks, highest priority first, then in id order
	inReady    map[string]bool
	candidates map[string]struct{}  // ids to evaluate at the next schedule
	recheck    map[string]time.Time // files that did not parse, to read again
	refused    error                // the list is not served (e.g. writable by others)
	misnamed   map[string]bool      // files noted as misnamed (misnamed.go)
	namesDirty bool                 // an event named a misnamed file: look again

	nextRetry   time.Time // earliest retryAt of a retrying task
	nextRecheck time.Time // earliest re-check of a file that did not parse

	// dueAt holds the tasks that wait for a time (a notBefore, a
	// schedule's next time, a window's opening), and nextDue the
	// earliest of those times (queue.go).
	dueAt   map[string]time.Time
	nextDue time.Time

	mirror *subagent.Mirror // links for mirroring handed-off children's events (waits.go); nil until needed

	// acceptedBefore holds the tasks whose acceptance the list's event log
	// records already, until the list's first scan: a restart does not
	// log them again.
	acceptedBefore map[string]bool

	kids map[string]map[string]struct{} // the tasks whose parent is an id (settle.go)

	clock         clock.Clock                  // the daemon's
	pauses        *job.Pauses                  // the daemon's: agent profiles paused by a usage limit
	pauseHeld     map[string]struct{}          // tasks held back by their profile's pause (runs.go)
	goneWorktrees map[string]worktree.Worktree // worktrees of deleted tasks whose jobs still run, by id
	prepared      map[string]*work             // jobs that took a queued ticket, by task id, until they end (queue.go)
	admitHeld     map[string]string            // tasks their list or profile holds back, with why (admission.go)
	lastRead      map[string]*taskfile.Task    // task files as the loop last read them, for the jobs it starts (lastread.go)
}

// entry is what the loop remembers of one task file: enough to decide, not
// the whole task (which is re-read whenever something is done with it).
// There is one per task file, finished ones too: its flags are together
// at its end, where they share words.
type entry struct {
	hash   uint64 // of the bytes last reconciled
	status string
	state  task.State
	// What the loop keeps of the daemon's record of the task as last
	// observed (task.Load), and no more: a list of finished tasks costs
	// little memory. Whatever acts on the task reads its record again.
	startedAt  time.Time // when its latest attempt started
	finishedAt time.Time // when it last ended (retention goes by it)
	costUSD    *float64  // what its latest attempt's result says it cost
	holdReason string    // why it waits for a person (its hitl's reason)
	failure    string    // why it failed, timed out or was stopped (error)
	parent     string
	// branchOf is the parent retention follows when it is not parent: a
	// task's metadata.parentTaskId without a metadata.taskd.parent, or
	// the parent of a task that is not taskd's (retention.ParentOf).
	branchOf  string
	blockedBy []string
	retryAt   time.Time
	resolve   string
	children  []string       // the children a waiting parent waits for
	returnOf  string         // the task whose return chain this one is a step of
	wait      *subagent.Wait // what a task suspended by /handoff or /converge waits for (waits.go)

	reject    string    // why the current file is refused ("" when accepted)
	cycle     string    // the blockedBy cycle the task is in, if any
	badSince  time.Time // when the current unparsable bytes were first seen
	badReason string

	job       *work     // non-nil while a job works on the task
	jobErrors int       // consecutive jobs that failed for reasons outside the task
	holdUntil time.Time // no new job before this, after such failures

	priority     int               // metadata.taskd.priority: the highest starts first
	notBefore    time.Time         // metadata.taskd.notBefore: not started before
	recur        *recurrence       // a schedule's expression and what its file records (recur.go)
	scheduledFor time.Time         // a schedule's run: the time it was made for
	settleMisses int               // settling jobs in a row that found nothing to do (settle.go)
	profile      string            // the agent profile a plain task runs with
	spentFor     time.Time         // the startedAt of the attempt whose cost was counted (admission.go)
	workspace    worktree.Worktree // the task's git worktree, if it has one (Path set)

	// scanned is the list's scan that last found the task's file
	// (list.scanned): an entry a scan did not find is looked at again.
	scanned   uint32
	owned     bool // the task is taskd's
	cancel    bool // metadata.taskd.cancel
	boundary  bool // a workflow completed at a stage boundary: resolve "continue" walks on
	archived  bool
	delivered bool // an ended child's result is in its parent's inbox
	accepted  bool // TaskAccepted was logged by this daemon
	// changedInJob is set when the file was seen to change while a job
	// worked on the task: the job's report is then trusted as the file's
	// contents only if it is what was seen last.
	changedInJob  bool
	waitOnFailure bool // metadata.taskd.onBlockerFailure is "wait"
	seen          bool // observed as taskd's before: a change of state is news
}

var hashSeed = maphash.MakeSeed()

func hashBytes(b []byte) uint64 { return maphash.Bytes(hashSeed, b) }

// taskID returns the id of a task file name, or false for every other name
// (dot-files, temporary files, lock directories, editors' swap files).
func taskID(name string) (string, bool) {
	id, ok := strings.CutSuffix(name, ".json")
	if !ok || !taskfile.ValidID(id) {
		return "", false
	}
	return id, true
}

// addLists makes sure every list directory under the root is known and
// watched. Its watch is added before the list is scanned.
func (d *Daemon) addLists() {
	entries, err := fsroot.ReadDirectory(d.cfg.Root)
	if err != nil {
		d.log.Error("read task root", "path", d.cfg.Root, "err", err)
		return
	}
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		seen[name] = true
		if d.lists[name] == nil {
			d.openList(name, e)
		}
	}
	for id := range d.lists {
		if !seen[id] {
			d.dropList(id)
		}
	}
}

// wanted reports whether list id is served (--list restricts).
func (d *Daemon) wanted(id string) bool {
	if strings.HasPrefix(id, ".") {
		return false
	}
	return len(d.cfg.Lists) == 0 || slices.Contains(d.cfg.Lists, id)
}

// openList starts serving list id if it is a real directory (never a link
// out of the root) that we want.
func (d *Daemon) openList(id string, de fs.DirEntry) {
	if !d.wanted(id) || de.Type()&fs.ModeSymlink != 0 || !de.IsDir() {
		if de.Type()&fs.ModeSymlink != 0 && d.wanted(id) {
			d.log.Warn("not serving a list that is a symbolic link", "list", id)
		}
		return
	}
	path := filepath.Join(d.cfg.Root, id)
	dir, err := taskfile.Open(path)
	if err != nil {
		d.log.Warn("open list", "list", id, "err", err)
		return
	}
	dir.KeepLockDirs()   // in .taskd/locks: no inode made and freed per write
	dir.RememberWrites() // the loop does not read back what a job wrote (flushDirty)
	dir.KeepLockOpen()   // .lock opened once, not per write
	l := newList(id, dir)
	l.Events.SetRotation(eventlog.Rotation{MaxBytes: d.cfg.Retention.EventsMaxBytes, Keep: d.cfg.Retention.EventsKeep})
	l.Events.KeepFailed(keptEvents)
	l.acceptedBefore = eventlog.Accepted(path)
	l.pauses, l.clock = d.pauses, d.clock
	if err := area.CheckList(path, d.cfg.Insecure); err != nil {
		l.refused = err
		d.listRefused(l, err, "not serving list; fix it and it is served at once")
	} else if err := area.Make(path); err != nil {
		d.log.Warn("make the list's .taskd", "list", id, "err", err)
	}
	if err := d.watcher.Add(path); err != nil {
		d.log.Error("watch list", "list", id, "err", err)
		return
	}
	d.serve(l)
	l.Events.Append(eventlog.Event{Type: eventlog.DaemonStarted, List: id, Data: map[string]any{"pid": os.Getpid()}})
	if l.refused != nil {
		return // nothing is removed from a list taskd does not serve
	}
	if removed, err := dir.Sweep(time.Minute); err == nil && len(removed) > 0 {
		d.log.Info("removed leftovers of a crashed writer", "list", id, "files", removed)
	}
	d.sweepWorktrees(l)
	d.sweepKept(l)
}

// newList returns the loop's state for list id, read from dir: empty, not
// yet served.
func newList(id string, dir *taskfile.Dir) *list {
	return &list{
		List:    &job.List{ID: id, Dir: dir, Events: eventlog.New(dir.Path())},
		entries: map[string]*entry{}, waiters: map[string]map[string]struct{}{}, kids: map[string]map[string]struct{}{},
		dirty: map[string]bool{}, inReady: map[string]bool{},
		candidates: map[string]struct{}{}, recheck: map[string]time.Time{},
		clock: clock.Real,
	}
}

// serve makes the loop serve list l, with the slot counts of its id.
func (d *Daemon) serve(l *list) {
	d.slots.Serve(l.ID)
	d.lists[l.ID] = l
	d.order = append(d.order, l.ID)
}

// keptEvents is how many events a list's log keeps while its file
// system cannot take them (a full disk), to write them once it can:
// the ends recorded meanwhile are logged, in order, once each.
const keptEvents = 4096

func (d *Daemon) dropList(id string) {
	l := d.lists[id]
	d.watcher.Remove(l.Dir.Path())
	for _, e := range l.entries {
		if e.job != nil {
			e.job.stop(agent.ErrTaskGone)
		}
	}
	if err := l.Events.Close(); err != nil {
		d.log.Warn("close the event log", "list", id, "err", err)
	}
	d.slots.Unserve(l.ID)
	l.Dir.CloseLock() // a job stopped above that writes again opens it again
	delete(d.lists, id)
	d.order = slices.DeleteFunc(d.order, func(s string) bool { return s == id })
	d.log.Info("list went away", "list", id)
}

// listChanged handles an event for a name at the root.
func (d *Daemon) listChanged(name string) {
	fi, err := os.Lstat(filepath.Join(d.cfg.Root, name))
	switch {
	case err != nil:
		if d.lists[name] != nil {
			d.dropList(name)
		}
	case d.lists[name] == nil:
		d.openList(name, fs.FileInfoToDirEntry(fi))
		if l := d.lists[name]; l != nil {
			d.scanList(l)
		}
	case !fi.IsDir():
		d.log.Warn("a list directory was replaced by a file; not serving it", "list", name)
		d.dropList(name)
	}
}

// checkListMode serves list l again once it passes checkList (its own
// user's, not writable by others, no link in its area), and stops starting
// its tasks when it does not (agents already running finish). The watcher
// reports a list directory's mode changes; every rescan checks again.
func (d *Daemon) checkListMode(l *list) {
	err := area.CheckList(l.Dir.Path(), d.cfg.Insecure)
	switch {
	case err == nil && l.refused != nil:
		l.refused = nil
		l.Events.Mute(false)
		d.log.Info("serving list: it is fixed", "list", l.ID)
		area.Make(l.Dir.Path())
		d.scanList(l)
		for id := range l.entries {
			l.consider(id) // unchanged files are not observed again
		}
	case err != nil && l.refused == nil:
		l.refused = err
		l.ready, l.inReady = nil, map[string]bool{}
		clear(l.candidates)
		// Jobs waiting for a slot have not started their agents: they stop
		// too, and are recorded as interrupted.
		for _, e := range l.entries {
			if e.job != nil && d.slots.Queuing(e.job.slot.ticket) {
				e.job.stop(agent.ErrInterrupted)
			}
		}
		d.listRefused(l, err, "not serving list any more; fix it and it is served again")
	}
}

// scanList reconciles every task file of l, and forgets files that are gone.
func (d *Daemon) scanList(l *list) {
	ids, misnamed, err := l.Dir.Names()
	if err != nil {
		d.log.Warn("list tasks", "list", l.ID, "err", err)
		return
	}
	l.scanned++ // marks the entries of the files found by this scan
	if l.refused == nil {
		d.noteMisnamed(l, misnamed)
		// Files whose bytes are those last reconciled are not parsed again:
		// a rescan of unchanged lists makes little garbage (the hashes are
		// a slice beside ids, not a map: a rescan of 100,000 files).
		known := make([]uint64, len(ids))
		for i, id := range ids {
			if e := l.entries[id]; e != nil && e.reject == "" && e.badReason == "" {
				known[i] = e.hash
			}
		}
		readTasks(l.Dir, ids, known, func(id string, tf *taskfile.Task, err error, same bool) {
			if same {
				d.unchanged(l, id)
			} else {
				d.reconcile(l, id, tf, err)
			}
			if e := l.entries[id]; e != nil {
				e.scanned = l.scanned
			}
		})
		l.acceptedBefore = nil
	}
	for id, e := range l.entries {
		if e.scanned != l.scanned {
			d.refresh(l, id)
		}
	}
}

// refresh re-reads task id of l and reacts to what changed. It is the only
// place file contents enter the loop; an unchanged file costs one read.
func (d *Daemon) refresh(l *list, id string) {
	if l.refused != nil {
		return
	}
	tf, err := l.Dir.Read(id)
	d.reconcile(l, id, tf, err)
}

// reconcile is refresh with the file already read.
func (d *Daemon) reconcile(l *list, id string, tf *taskfile.Task, err error) {
	e := l.entries[id]
	if errors.Is(err, fs.ErrNotExist) {
		if e != nil {
			d.forget(l, id, e)
		}
		return
	}
	var bad *taskfile.BadFileError
	if errors.As(err, &bad) {
		d.badFile(l, id, e, bad)
		return
	}
	if err != nil {
		d.log.Warn("read task", "list", l.ID, "task", id, "err", err)
		return
	}
	h := hashBytes(tf.Raw())
	if e != nil && e.hash == h && e.reject == "" && e.badReason == "" {
		d.unchanged(l, id)
		l.keepRead(id, e, tf)
		return // our own write, or an event for an unchanged file
	}
	if e == nil {
		e = &entry{}
		l.entries[id] = e
	}
	e.hash = h
	if e.job != nil {
		// The job's own write, or another writer's (a person, Claude Code,
		// another job): when the job ends, its last view of the file may
		// be stale (finished then reads the file again).
		e.changedInJob = true
	}
	d.observe(l, id, e, tf)
	l.keepRead(id, e, tf)
}

// unchanged handles task id of l read with the bytes the loop last saw.
// If a job is writing, the file may have been written by the job and then
// put back by someone else (a task that ended, deleted and dropped again
// with the same contents): the job's report is checked against the file
// when it ends.
func (d *Daemon) unchanged(l *list, id string) {
	if e := l.entries[id]; e != nil && e.job != nil {
		e.changedInJob = true
	}
}

// scanBatch is how many task files a scan reads ahead of reconciling them.
const scanBatch = 256

// readTasks reads task files ids of dir and calls fn with each, in the
// order of ids, from the calling goroutine. The files are read (opened,
// read and parsed: most of a scan's time) by one goroutine per CPU, a
// batch ahead of fn; a file whose bytes hash to known[i] (0: not known)
// is not parsed, and fn is told it is the same.
func readTasks(dir *taskfile.Dir, ids []string, known []uint64, fn func(id string, tf *taskfile.Task, err error, same bool)) {
	type result struct {
		tf   *taskfile.Task
		err  error
		same bool // the bytes hash to known[i]: not parsed
	}
	workers := runtime.GOMAXPROCS(0)
	read := func(batch []string, known []uint64) <-chan []result {
		c := make(chan []result, 1)
		go func() {
			out := make([]result, len(batch))
			var next atomic.Int64
			var wg sync.WaitGroup
			for range min(workers, len(batch)) {
				wg.Go(func() {
					var buf []byte // reused: an unchanged file leaves nothing behind
					for i := int(next.Add(1) - 1); i < len(batch); i = int(next.Add(1) - 1) {
						id := batch[i]
						data, err := dir.ReadRaw(id, buf)
						if err != nil {
							out[i].err = err
							continue
						}
						buf = data
						if h := known[i]; h != 0 && hashBytes(data) == h {
							out[i].same = true
							continue
						}
						out[i].tf, out[i].err = taskfile.Parse(bytes.Clone(data), dir.File(id), id)
					}
				})
			}
			wg.Wait()
			c <- out
		}()
		return c
	}
	batch := func(i int) ([]string, []uint64) {
		from, to := min(i, len(ids)), min(i+scanBatch, len(ids))
		return ids[from:to], known[from:to]
	}
	ahead := read(batch(0))
	for i := 0; i < len(ids); i += scanBatch {
		cur := ahead
		if i+scanBatch < len(ids) {
			ahead = read(batch(i + scanBatch))
		}
		for k, r := range <-cur {
			fn(ids[i+k], r.tf, r.err, r.same)
		}
	}
}

// forget handles a task file that was deleted.
func (d *Daemon) forget(l *list, id string, e *entry) {
	if e.job != nil {
		e.job.stop(agent.ErrTaskGone)
		if e.workspace.Path != "" {
			if l.goneWorktrees == nil {
				l.goneWorktrees = map[string]worktree.Worktree{}
			}
			l.goneWorktrees[id] = e.workspace // removed when the job has ended
		}
	} else {
		if e.workspace.Path != "" {
			d.removeWorktree(l.List, id, e.workspace)
		}
		d.forgetKept(l, id) // with a job, when it has ended (finished)
	}
	if e.reject != "" {
		fsroot.Remove(l.Dir.Path(), rejectPath(l, id))
	}
	delete(l.lastRead, id)
	l.setBlockedBy(id, nil)
	l.setParent(id, e.parent, "")
	l.unready(id)
	delete(l.dueAt, id)
	delete(l.admitHeld, id)
	delete(l.entries, id)
	l.wakeWaiters(id)  // like Claude Code: a deleted blocker blocks nothing
	l.considerKids(id) // a queued child of a task that is gone never runs
}

// runDir returns the run folder of attempt n of task id.
func (l *list) runDir(id string, n int) string {
	return area.RunDir(l.Dir.Path(), id, n)
}
