package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/taskd/taskd/taskfile"
)

// A simple task (see lateClaimable) does not wait for its claim to be
// written: its agent starts first, and the file is marked in_progress only
// if the agent is still running Config.ClaimAfter later. An agent that ends
// sooner is recorded in one write, pending → completed (or failed): one
// fsync of the task file instead of two. Until then the attempt is
// recorded in its run folder only: cmd.json, written before the agent
// starts, names the task file the attempt was started from (its SHA-256,
// inode and modification time), so that a daemon killed meanwhile finds the
// attempt on restart and records it (its result.json if the agent had
// exited, else interrupted) instead of starting it again. Once the end is
// written the file differs from that origin; a file dropped again with the
// same contents is a new file, with another inode or time.

// taskOrigin identifies the task file an unclaimed attempt started from.
type taskOrigin struct {
	SHA256 string    `json:"sha256"`
	Inode  uint64    `json:"inode"`
	MTime  time.Time `json:"mtime"`
}

// originOf returns the origin of task file path, read as data; ok is false
// if the file cannot be identified (then no attempt starts unclaimed).
func originOf(path string, data []byte) (taskOrigin, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return taskOrigin{}, false
	}
	ino, ok := inodeOf(fi)
	if !ok {
		return taskOrigin{}, false
	}
	sum := sha256.Sum256(data)
	return taskOrigin{SHA256: hex.EncodeToString(sum[:]), Inode: ino, MTime: fi.ModTime().UTC()}, true
}

// still reports whether the task file at path is, by inode, size and
// modification time, still the file of origin o, size bytes long.
func (o taskOrigin) still(path string, size int) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	ino, ok := inodeOf(fi)
	return ok && ino == o.Inode && fi.Size() == int64(size) && fi.ModTime().UTC().Equal(o.MTime)
}

func inodeOf(fi os.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Ino), true
}

// unclaimedAt returns when the attempt in runDir started, if a daemon
// started it unclaimed from a task file with origin o (and did not record
// its end, or the file would differ).
func unclaimedAt(runDir string, o taskOrigin) (time.Time, bool) {
	path := filepath.Join(runDir, "cmd.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, false
	}
	var info struct {
		StartedFrom *taskOrigin `json:"startedFrom"`
	}
	if json.Unmarshal(data, &info) != nil || info.StartedFrom == nil {
		return time.Time{}, false
	}
	f := *info.StartedFrom
	if f.SHA256 != o.SHA256 || f.Inode != o.Inode || !f.MTime.Equal(o.MTime) {
		return time.Time{}, false
	}
	at := time.Now()
	if fi, err := os.Stat(path); err == nil {
		at = fi.ModTime()
	}
	return at, true
}

// lateClaimable reports whether task t, about to run attempt sp.Attempt,
// may start before its claim is written: a plain task whose prompt has no
// command lines, with no loop, return chain, parallel items, planner or
// subagent type — an attempt that writes nothing but its end.
func (d *Daemon) lateClaimable(t *taskfile.Task, sp spec) bool {
	if d.cfg.ClaimAfter < 0 {
		return false
	}
	if wf, _ := t.Metadata.String("workflowType"); wf != "" {
		return false
	}
	m := t.Metadata.Object("taskd")
	for _, k := range []string{"agentType", "previous"} {
		if _, ok := m.Get(k); ok {
			return false
		}
	}
	if hasSlashLines(taskPrompt(t, sp)) {
		return false
	}
	ov, err := taskOverrides(t)
	return err == nil && ov.Loop == nil && len(ov.Return) == 0 && len(ov.Parallel) == 0 && !ov.Auto
}

// runUnclaimed runs attempt sp.Attempt of simple task id, read as t from a
// file with origin o, without writing its claim first.
func (d *Daemon) runUnclaimed(ctx context.Context, j *job, t *taskfile.Task, sp spec, o taskOrigin) (*taskfile.Task, error) {
	l, id := j.l, j.id
	startedAt := time.Now() // until the agent has started
	claimSpec := sp
	// Called by the write that ends the attempt, in this goroutine.
	sp.unclaimed = func(t *taskfile.Task) { markRunning(t, id, claimSpec, startedAt) }
	// The start is logged when the agent has started, or with the end of
	// an attempt that could not start.
	logStart := func() {
		l.events.append(Event{Type: EvTaskStarted, List: l.id, Task: id, Parent: sp.Parent, Attempt: sp.Attempt})
	}
	a, err := d.prepareAttempt(ctx, l, t, sp)
	if err != nil {
		logStart()
		return d.finish(ctx, l, id, sp, Result{Error: err.Error(), Summary: err.Error(), ExitCode: -1}, notStarted)
	}
	a.origin = &o
	var timer *time.Timer
	claimed := make(chan struct{})
	// The attempt is prepared ahead of its slot, while other agents run,
	// and nothing in the file says so. When the slot comes, the file must
	// still be the one it was prepared from (one lstat): a person may have
	// changed the prompt, or deleted or completed the task, meanwhile.
	path, size := l.dir.File(id), len(t.Raw())
	changed, started := false, false
	a.beforeStart = func(ctx context.Context) error {
		if err := j.acquire(ctx); err != nil {
			return err
		}
		if !o.still(path, size) {
			changed = true
			return errPreparedStale
		}
		return nil
	}
	a.afterExit = j.agentExited
	a.afterStart = func(at time.Time) { // in this goroutine, inside runAttempt
		started = true
		logStart()
		startedAt = at
		timer = time.AfterFunc(d.cfg.ClaimAfter, func() {
			defer close(claimed)
			d.lateClaim(ctx, l, id, claimSpec, at)
		})
	}
	res, out := d.runAttempt(ctx, a)
	if !started && (changed || out == interrupted || !o.still(path, size)) {
		// Nothing ran and nothing was recorded, and either the file changed
		// or the daemon stops: the file is left as it is, and the task is
		// looked at again as the file says. A job that holds its slot keeps
		// it for that (errPreparedStale). What was prepared goes (a daemon
		// killed first leaves it to be made again): the run folder if this
		// attempt made it, else the files it wrote there, cmd.json first,
		// by which a restart would take the attempt for one that started.
		// Other files an earlier run of the same attempt number left (a
		// task dropped again with the same contents) stay.
		if err := removePrepared(a); err != nil {
			d.log.Warn("remove unused run folder", "list", l.id, "task", id, "err", err)
		}
		if changed {
			return nil, errPreparedStale
		}
		j.agentExited()
		return nil, errNotRunnable
	}
	if !started {
		// Recorded as an attempt that could not start (no agent program,
		// no working directory): its start is logged before its end.
		logStart()
	}
	j.agentExited() // in case the agent never started
	if timer != nil && !timer.Stop() {
		<-claimed // its write is done before the end is written
	}
	return d.afterAttempt(ctx, l, id, sp, res, out)
}

// removePrepared removes what attempt a, which never started, prepared:
// its run folder if it made it, else the files it wrote in it.
func removePrepared(a *attempt) error {
	dir := a.dirPath()
	if a.madeDir {
		return os.RemoveAll(dir)
	}
	var errs []error
	for _, name := range []string{"cmd.json", "prompt.md", "stdout.log", "stderr.log"} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for name := range a.files {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// errPreparedStale ends an unclaimed attempt whose task file changed while
// it waited for its slot, before its agent started; the job, which holds
// the slot, runs the task again as the file now says (runTask), or leaves
// it to the loop.
var errPreparedStale = errors.New("task file changed before its prepared attempt started")

// lateClaim marks task id in_progress for attempt sp.Attempt, started at
// at, unless the file no longer says it waits for that attempt (a person
// changed it meanwhile: the end of the attempt is recorded over whatever
// it says then).
func (d *Daemon) lateClaim(ctx context.Context, l *list, id string, sp spec, at time.Time) {
	_, err := l.dir.Update(ctx, id, func(t *taskfile.Task) error {
		owned, _ := addressed(t)
		s, err := readSpec(t)
		if !owned || err != nil || s.Cancel || !pendingRunnable(t, s) || s.Attempt != sp.Attempt-1 {
			return errNotRunnable
		}
		markRunning(t, id, sp, at)
		return nil
	}, taskfile.NoDirSync) // as claim: a power loss may undo it
	if err != nil && !errors.Is(err, errNotRunnable) && ctx.Err() == nil {
		d.log.Warn("mark task running", "list", l.id, "task", id, "attempt", sp.Attempt, "err", err)
	}
}

// recoverUnclaimed records attempt sp.Attempt of task id, which a daemon
// started unclaimed, at at, from the file as it still is, and then died
// before recording it: as recoverRun does for a task marked running.
func (d *Daemon) recoverUnclaimed(ctx context.Context, l *list, id string, sp spec, at time.Time) (*taskfile.Task, error) {
	runDir := l.runDir(id, sp.Attempt)
	if res, ok := readResult(runDir); ok && res.StartedAt != nil {
		at = *res.StartedAt
	}
	claimSpec := sp
	sp.unclaimed = func(t *taskfile.Task) { markRunning(t, id, claimSpec, at) }
	d.log.Info("found an attempt started before a restart and not recorded", "list", l.id, "task", id, "attempt", sp.Attempt)
	return d.recoverRun(ctx, l, id, sp)
}
