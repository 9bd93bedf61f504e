package job

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// A Claim is a task marked running for a new attempt (or starting, when
// it is claimed ahead of its slot): the task as the claim wrote it, the
// attempt's spec and the task's record, and the file's bytes before the
// claim, to take it back with if the attempt never starts.
type Claim struct {
	ID     string
	Task   *taskfile.Task
	Spec   task.Spec
	Record task.Record
	before []byte
	// ahead is set while the file says starting: the claim was made
	// ahead of the job's slot, and Start marks it running.
	ahead bool
	// written is the claim's write, when the fsync of the list's
	// directory that makes it durable was put off (ClaimToStart):
	// Durable waits for it.
	written *taskfile.Task
}

// A Decide function looks at a task under the claim's lock. It returns an
// error (ErrNotRunnable when the task no longer asks for the work) to
// refuse the claim; it may change the task and its spec (a plain task's
// attempt number is its run's; a prompt's block becomes fields).
type Decide func(t *taskfile.Task, sp *task.Spec) error

// Claim marks the job's task as running for a new attempt, if it is still
// taskd's, not cancelled, and decide accepts it, read under the lock:
// status in_progress, state running, the attempt number and startedAt,
// the fields Claude Code expects filled in; for a task of a Claude Code
// session's list that names no cwd, the session's directory
// (sessiondir.go). The write is durable (the
// directory fsynced) before Claim returns: no agent of the attempt starts
// before it.
//
// A job whose slot is not free yet claims its task ahead of the slot:
// state starting, status still pending (Claude Code's list shows it
// waiting), the attempt number and startedAt (when it began to wait), as
// durable; its attempt is prepared while other agents run, and Start
// marks it running once the slot has come, just before its agent starts.
func (j *Job) Claim(ctx context.Context, decide Decide) (*Claim, error) {
	return j.claim(ctx, decide, false)
}

// ClaimToStart is Claim for an attempt whose agent starts through Start.
// A claim made ahead of the slot is not made durable before it returns:
// the fsync of the list's directory it needs is put off until Start (or
// Durable, before the attempt does anything a restart could not take
// back), and is then most often found done already by the fsync of
// another write of the list — the claims of tasks prepared together, the
// end of an attempt — so that they share one. Until then the file says
// starting, and a power loss may bring back its version before the
// claim; nothing of the attempt has run.
func (j *Job) ClaimToStart(ctx context.Context, decide Decide) (*Claim, error) {
	return j.claim(ctx, decide, true)
}

// Durable returns once claim c is durable: at once unless it was made
// ahead of the slot by ClaimToStart and no fsync of the list's directory
// has covered it since.
func (j *Job) Durable(c *Claim) error { return j.List.Dir.Sync(c.written) }

// claim is Claim, the claim's directory fsync put off when deferSync is
// set and the claim is made ahead of the slot.
func (j *Job) claim(ctx context.Context, decide Decide, deferSync bool) (*Claim, error) {
	c := &Claim{ID: j.ID, ahead: j.Slot != nil && !j.Slot.Ready()}
	defer j.holdWhileSlow()()
	var opts []taskfile.WriteOption
	if deferSync && c.ahead {
		opts = append(opts, taskfile.DeferDirSync)
	}
	update := func(fn func(*taskfile.Task) error) (*taskfile.Task, error) {
		return j.List.Dir.Update(ctx, j.ID, fn, opts...)
	}
	if seen := j.Seen; seen != nil && seen.ID == j.ID {
		// The file as the job (or the loop, for it) read it: a claim
		// refused on those bytes is decided again on the file as it is,
		// so that what the claim refuses is always what the file says.
		j.Seen = nil
		update = func(fn func(*taskfile.Task) error) (*taskfile.Task, error) {
			t, err := j.List.Dir.UpdateFrom(ctx, seen, fn, opts...)
			if err != nil && !Retryable(err) && ctx.Err() == nil {
				t, err = j.List.Dir.Update(ctx, j.ID, fn, opts...)
			}
			return t, err
		}
	}
	t, err := update(func(t *taskfile.Task) error {
		c.before = t.Raw()
		owned, _ := task.Addressed(t)
		sp, err := task.ReadSpec(t)
		if !owned || err != nil || sp.Cancel || t.Status == taskfile.StatusCompleted && !goesOn(t, sp) {
			return ErrNotRunnable // a person's completed stands
		}
		if _, _, cancel := CancelCause(j.List.Dir, t); cancel {
			return ErrNotRunnable // a task above it is cancelled
		}
		if err := decide(t, &sp); err != nil {
			return err
		}
		j.recordSessionDir(t, &sp)
		c.Spec = sp
		return markRunning(t, j.ID, sp, j.Now(), c.ahead)
	})
	j.remember(t, err)
	if err != nil {
		return nil, err
	}
	c.Task, c.Record = t, task.RecordOf(t)
	if len(opts) > 0 {
		c.written = t
	}
	return c, nil
}

// goesOn reports whether completed task t is one a person asked to go
// on: a workflow that stopped at a stage boundary, answered "continue".
func goesOn(t *taskfile.Task, sp task.Spec) bool {
	return sp.State == task.Succeeded && sp.Resolve == "continue" && task.RecordOf(t).Boundary != nil
}

// slowClaim is how long a claim may take before its task is shown held.
const slowClaim = 2 * time.Second

// holdWhileSlow shows the job's task held while a claim that started now
// takes longer than slowClaim: most often another writer (Claude Code)
// holds the task file's lock, which taskd waits for however long it is
// held and kept fresh, and then decides again. The returned function ends
// the hold.
func (j *Job) holdWhileSlow() (done func()) {
	var mu sync.Mutex
	finished, held := false, false
	timer := time.AfterFunc(slowClaim, func() {
		lock := j.List.Dir.File(j.ID) + ".lock"
		reason := fmt.Sprintf("waiting for the lock %s: another writer (Claude Code?) holds it; taskd never breaks a lock its holder keeps fresh, and decides again once it is released", lock)
		if fi, err := os.Lstat(lock); err != nil || !fi.IsDir() {
			reason = fmt.Sprintf("the claim of the task has taken more than %s to write (a slow or stalled disk?)", slowClaim)
		}
		parent := ""
		if t, err := j.List.Dir.Read(j.ID); err == nil {
			parent, _ = t.Metadata.Object("taskd").String("parent")
		}
		mu.Lock()
		defer mu.Unlock()
		if !finished {
			j.Hold(reason, time.Time{}, parent)
			held = true
		}
	})
	return func() {
		timer.Stop()
		mu.Lock()
		defer mu.Unlock()
		finished = true
		if held {
			j.Unhold()
		}
	}
}

// markRunning records in task id that attempt sp.Attempt started at now:
// status in_progress, state running, the attempt and its run folder (a
// plain task's), the fields Claude Code expects. Ahead of its slot, the
// attempt is starting (status pending) until Start.
func markRunning(t *taskfile.Task, id string, sp task.Spec, now time.Time, ahead bool) error {
	t.FillDefaults(id)
	ev := task.Claim
	if ahead {
		ev = task.Prepare
	}
	rec := task.RecordOf(t)
	rec.StartedAt = now
	if wf, _ := t.Metadata.String("workflowType"); wf == "" {
		rec.Attempt, rec.RunDir = sp.Attempt, area.RelRunDir(id, sp.Attempt)
	}
	rec.RetryAt, rec.FinishedAt = time.Time{}, time.Time{}
	_, err := task.Apply(t, ev, rec)
	return err
}

// Pending is the claim's check for a task waiting to run at now: pending,
// with no state, or a retry or the end of a pause that is due.
func Pending(t *taskfile.Task, s task.Spec, now time.Time) bool {
	if st := t.Status; st != "" && st != taskfile.StatusPending {
		return false
	}
	switch s.State {
	case task.None:
		return true
	case task.Retrying, task.Paused:
		return !now.Before(s.RetryAt)
	}
	return false
}

// ErrClaimChanged keeps a prepared agent from starting: its task file
// changed after the claim (a person edited, replaced or deleted it).
var ErrClaimChanged = errors.New("the task file changed before its agent started")

// Check reports whether the task file still holds claim c, just before
// its agent starts: it says this attempt runs (state running, the
// attempt's number and start time). The job's own writes since the claim
// (children its prompt commands pushed) keep it; a file replaced,
// deleted, or given another state meanwhile does not (ErrClaimChanged),
// and is decided on again as it now says.
func (j *Job) Check(c *Claim) error {
	t, err := j.List.Dir.Current(c.ID)
	if err != nil || !c.holds(t) {
		return ErrClaimChanged
	}
	return nil
}

// Start lets claim c's agent start, now that the job holds its slot: the
// file must still hold the claim (Check). A claim made ahead of the slot
// is made durable, if ClaimToStart put that off and no other write's
// fsync has done it since (Durable), and marked running: state running,
// status in_progress, startedAt now. That write skips the directory's fsync: a starting task is
// recovered as a running one is (its agent's result read, or the attempt
// run again), so falling back to it after a power loss is safe, and the
// agent does not wait for a second fsync. The extra write is paid only
// by tasks claimed ahead of a slot.
//
// A write that fails (a full disk) is tried again, the task held
// meanwhile and its agent waiting, as long as the job runs (Persist).
func (j *Job) Start(ctx context.Context, c *Claim) error {
	if !c.ahead {
		return j.Check(c)
	}
	return j.Persist(ctx, fmt.Sprintf("the start of attempt %d is not recorded yet, and its agent waits for it", c.Spec.Attempt), c.Spec.Parent, func(wctx context.Context) error {
		return j.start(wctx, c)
	})
}

// start marks claim c, made ahead of the slot, running, once the claim is
// durable.
func (j *Job) start(ctx context.Context, c *Claim) error {
	if err := j.Durable(c); err != nil {
		return err
	}
	t, err := j.update(ctx, func(t *taskfile.Task) error {
		if !c.holds(t) {
			return ErrClaimChanged
		}
		rec := task.RecordOf(t)
		rec.StartedAt = j.Now()
		_, err := task.Apply(t, task.Start, rec)
		return err
	}, taskfile.NoDirSync)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, task.ErrIllegal):
		return ErrClaimChanged
	case err != nil:
		return err
	}
	c.Task, c.Record, c.ahead = t, task.RecordOf(t), false
	return nil
}

// holds reports whether t still says what the claim wrote.
func (c *Claim) holds(t *taskfile.Task) bool {
	r := task.RecordOf(t)
	return r.State == c.Record.State && r.Attempt == c.Record.Attempt && r.StartedAt.Equal(c.Record.StartedAt) && t.Status == c.Task.Status
}

// Withdraw takes claim c back: the file's bytes before it, if the file
// still holds the claim's bytes; else, if it still holds the claim (the
// job wrote to it since), the fields the claim set, as they were. A file
// someone else changed is left as it is.
func (j *Job) Withdraw(ctx context.Context, c *Claim) error {
	dir := j.List.Dir
	before, perr := taskfile.Parse(c.before, c.ID+".json", c.ID)
	if perr != nil {
		return nil // the claim's own input: cannot happen
	}
	if err := task.CheckUndo(c.Task, before); err != nil {
		return err
	}
	err := dir.Swap(ctx, c.ID, c.Task.Raw(), c.before)
	if !errors.Is(err, taskfile.ErrChanged) {
		return err
	}
	was := task.RecordOf(before)
	_, err = dir.Update(ctx, c.ID, func(t *taskfile.Task) error {
		if !c.holds(t) {
			return ErrNotRunnable // someone else's change: left as it is
		}
		_, err := task.Unclaim(t, was)
		return err
	})
	if errors.Is(err, ErrNotRunnable) {
		return nil
	}
	return err
}

// NotStarted handles claim c whose agent (of attempt a, if one was
// prepared) was kept from starting by cause: cancelled by its task, it is
// recorded as cancelled; paused with its agent's profile, as paused;
// otherwise (the daemon stops, the list is refused
// or gone, the file changed or was removed, the run folder could not be
// written) what was prepared for it is removed and the claim is taken
// back, so that the file says what it said before and the task is decided
// on again as it says. It returns ErrClaimChanged when the file changed,
// cause when it is a failure of the file system that may mend (the task
// is then held: Retryable; the job steps out of line, giving up its slot,
// before the claim is taken back, a write that fails too while the disk
// is full), and
// ErrNotRunnable otherwise.
func (j *Job) NotStarted(ctx context.Context, c *Claim, a *agent.Attempt, cause error) (*taskfile.Task, error) {
	if errors.Is(cause, agent.ErrPaused) && a != nil {
		// Its profile was paused meanwhile: the task pauses with it, its
		// run folder kept as the record of the attempt that did not start.
		res := agent.Result{ExitCode: -1, Error: cause.Error(), Summary: cause.Error(), Limit: j.Pauses.Paused(a.Profile.Name, j.Now())}
		return j.Finish(ctx, c.Spec, res, agent.Paused, nil)
	}
	if a != nil {
		if err := removePrepared(a); err != nil {
			j.Log.Warn("remove an unused run folder", "list", j.List.ID, "task", c.ID, "err", err)
		}
	}
	if errors.Is(cause, agent.ErrCancelled) {
		res := agent.Result{Error: "cancelled before it started", ExitCode: -1}
		res.Summary = res.Error
		j.Emit(eventlog.Event{Type: eventlog.TaskStarted, Parent: c.Spec.Parent, Attempt: c.Spec.Attempt})
		return j.Finish(ctx, c.Spec, res, agent.Cancelled, nil)
	}
	if Retryable(cause) && !errors.Is(cause, ErrClaimChanged) && j.Slot != nil {
		// The job ends once the claim is taken back, its agent never to
		// start: it leaves the line now, and its slot if it holds one
		// goes to the tasks behind it. On a full disk the take-back is
		// held too, for as long as the disk stays full; a ticket left in
		// line meanwhile (a claim made ahead of its slot) would keep the
		// tasks after it in its list from their slots, and every other
		// task from even being tried (and held, visibly).
		j.Slot.StepAside()
	}
	err := j.Persist(ctx, fmt.Sprintf("the claim of attempt %d, whose agent did not start, is not taken back yet", c.Spec.Attempt), c.Spec.Parent, func(wctx context.Context) error {
		return j.Withdraw(wctx, c)
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("take back the claim of attempt %d: %w", c.Spec.Attempt, err)
	}
	switch {
	case errors.Is(cause, ErrClaimChanged):
		return nil, ErrClaimChanged
	case Retryable(cause):
		// Its run folder could not be written (a full disk, say): the
		// task is held, and tried again later.
		return nil, cause
	}
	return nil, ErrNotRunnable
}

// Unprepare takes back a claim a stopped daemon made ahead of the slot of
// attempt sp.Attempt, whose agent never started (agent.StartedIn): the
// task is as before the claim — pending, its attempt number and run
// folder the previous attempt's; paused still, if a usage limit had
// paused it, so that it resumes its session — and what was prepared for
// the attempt is removed. Nothing of the attempt ran, so nothing is
// recorded of it. A task no longer starting is left as it is
// (ErrNotRunnable).
func (j *Job) Unprepare(ctx context.Context, sp task.Spec) (*taskfile.Task, error) {
	t, err := j.List.Dir.Update(ctx, j.ID, func(t *taskfile.Task) error {
		if task.Of(t) != task.Starting {
			return ErrNotRunnable
		}
		ev := task.Withdraw
		rec := task.RecordOf(t)
		if lim, ok := pauseOf(rec.Pause); ok {
			ev = task.Pause // due already: it was claimed
			rec.RetryAt = lim.Until
		}
		rec.StartedAt = time.Time{}
		if wf, _ := t.Metadata.String("workflowType"); wf == "" {
			rec.Attempt, rec.RunDir = 0, ""
			if n := sp.Attempt - 1; n > 0 {
				rec.Attempt, rec.RunDir = n, area.RelRunDir(j.ID, n)
			}
		}
		_, err := task.Apply(t, ev, rec)
		return err
	})
	if err != nil {
		return nil, err
	}
	if wf, _ := t.Metadata.String("workflowType"); wf == "" {
		if err := removeUnstarted(j.List.Path(), j.List.RunDir(j.ID, sp.Attempt)); err != nil {
			j.Log.Warn("remove an unused run folder", "list", j.List.ID, "task", j.ID, "err", err)
		}
	}
	j.Log.Info("took back the claim of an attempt prepared ahead of its slot; its agent never started", "list", j.List.ID, "task", j.ID, "attempt", sp.Attempt)
	return t, nil
}

// removeUnstarted removes the run folder dir (inside the list at base) of
// an attempt whose agent never started: the files it prepared, then the
// folder.
func removeUnstarted(base, dir string) error {
	entries, err := fsroot.ReadDir(base, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.Type().IsRegular() {
			if err := fsroot.Remove(base, filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	if err := fsroot.Remove(base, dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// removePrepared removes what attempt a, which never started, prepared:
// the files it wrote in its run folder, and the folder itself if it made
// it (one an earlier run of the same attempt number left stays).
func removePrepared(a *agent.Attempt) error {
	base, dir := a.ListDir, a.Dir()
	names := []string{"cmd.json", "prompt.md"} // its logs are made at their first byte: it has none
	for name := range a.Files {
		names = append(names, name)
	}
	var errs []error
	for _, name := range names {
		if err := fsroot.Remove(base, filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if a.MadeDir && len(errs) == 0 {
		if err := fsroot.Remove(base, dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
