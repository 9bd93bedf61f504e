package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// claim marks task id as running for a new attempt, if it is still
// runnable when read under the lock: status in_progress, state running, the
// attempt number, startedAt; the fields Claude Code expects are filled in.
// It returns the task as written and its spec.
func (d *Daemon) claim(ctx context.Context, l *list, id string, runnable func(*taskfile.Task, task.Spec) bool) (*taskfile.Task, task.Spec, error) {
	var sp task.Spec
	t, err := l.dir.Update(ctx, id, func(t *taskfile.Task) error {
		var err error
		sp, err = d.takeClaim(l, id, t, runnable, time.Now())
		return err
	}) // durable, directory included, before any agent of the attempt starts
	return t, sp, err
}

// takeClaim is claim's change to t, made in memory: it returns
// errNotRunnable if t is not (or no longer) a task to run, and otherwise the
// spec of the new attempt.
func (d *Daemon) takeClaim(l *list, id string, t *taskfile.Task, runnable func(*taskfile.Task, task.Spec) bool, now time.Time) (task.Spec, error) {
	owned, _ := task.Addressed(t)
	sp, err := task.ReadSpec(t)
	if !owned || err != nil || sp.Cancel || !runnable(t, sp) {
		return task.Spec{}, errNotRunnable
	}
	if wf, _ := t.Metadata.String("workflowType"); wf == "" {
		if pl, err := d.promptPlan(l, t, sp); err == nil && pl.hasBlk {
			compileBlock(t, pl) // a /subtask or /command block becomes fields
			if c, err := task.ReadSpec(t); err == nil {
				c.Attempt = sp.Attempt
				sp = c
			}
		}
		// A plain task's attempt is its run; a workflow numbers its runs
		// as it runs its steps.
		sp.Attempt++
	}
	if err := markRunning(t, id, sp, now); err != nil {
		return task.Spec{}, err
	}
	return sp, nil
}

// markRunning records in task id that attempt sp.Attempt started at now: status
// in_progress, state running, the attempt and its run folder (a plain
// task's), the fields Claude Code expects. Applying it twice changes
// nothing.
func markRunning(t *taskfile.Task, id string, sp task.Spec, now time.Time) error {
	t.FillDefaults(id)
	if _, err := task.Move(t, task.Claim); err != nil {
		return err
	}
	m := task.Meta(t)
	m.Set("startedAt", task.Stamp(now))
	if wf, _ := t.Metadata.String("workflowType"); wf == "" {
		m.Set("attempt", sp.Attempt)
		m.Set("runDir", area.RelRunDir(id, sp.Attempt))
	}
	m.Delete("retryAt")
	m.Delete("finishedAt")
	return nil
}

// pendingRunnable is claim's check for a task waiting to run.
func pendingRunnable(t *taskfile.Task, s task.Spec) bool {
	st := t.Status
	if st == "" {
		st = taskfile.StatusPending
	}
	if st != taskfile.StatusPending {
		return false
	}
	switch s.State {
	case task.None:
		return true
	case task.Retrying:
		return !time.Now().Before(s.RetryAt)
	}
	return false
}

// A claimedAttempt is a task claimed for a new attempt: the task as the
// claim wrote it, the attempt's spec, and the file's bytes before the
// claim, to take it back with if the attempt never starts.
type claimedAttempt struct {
	id     string
	task   *taskfile.Task
	spec   task.Spec
	before []byte
}

// claimAttempt is claim, keeping what withdraw needs.
func (d *Daemon) claimAttempt(ctx context.Context, l *list, id string, runnable func(*taskfile.Task, task.Spec) bool) (*claimedAttempt, error) {
	c := &claimedAttempt{id: id}
	t, err := l.dir.Update(ctx, id, func(t *taskfile.Task) error {
		c.before = t.Raw()
		var err error
		c.spec, err = d.takeClaim(l, id, t, runnable, time.Now())
		return err
	})
	if err != nil {
		return nil, err
	}
	c.task = t
	return c, nil
}

// errClaimChanged keeps a prepared agent from starting: its task file
// changed after the claim (a person edited, replaced or deleted it).
var errClaimChanged = errors.New("the task file changed before its agent started")

// check reports whether the task file still holds the claim, just before
// the agent starts: it says this attempt runs (state running, the
// attempt's number and start time). The job's own writes since the claim
// (children its prompt commands pushed) keep it; a file replaced,
// deleted, or given another state meanwhile does not, and is decided on
// again as it now says.
func (c *claimedAttempt) check(l *list) error {
	t, err := l.dir.Read(c.id)
	if err != nil || !c.holds(t) {
		return errClaimChanged
	}
	return nil
}

// holds reports whether t still says what the claim wrote.
func (c *claimedAttempt) holds(t *taskfile.Task) bool {
	m, cm := t.Metadata.Object("taskd"), c.task.Metadata.Object("taskd")
	for _, k := range []string{"state", "attempt", "startedAt"} {
		v, _ := m.Get(k)
		cv, _ := cm.Get(k)
		if !sameValue(cv, v) {
			return false
		}
	}
	return t.Status == c.task.Status
}

// claimFields are the fields a claim sets, which withdraw puts back: the
// state through the state machine (task.Withdraw), the others as they were.
var claimFields = []string{"state", "attempt", "startedAt", "runDir", "retryAt", "finishedAt"}

// withdraw takes the claim back: the file's bytes before it, if the file
// still holds the claim's bytes; else, if it still holds the claim (the
// job wrote to it since), the fields the claim set, as they were.
func (c *claimedAttempt) withdraw(ctx context.Context, l *list) error {
	err := l.dir.Swap(ctx, c.id, c.task.Raw(), c.before)
	if !errors.Is(err, taskfile.ErrChanged) {
		return err
	}
	before, perr := taskfile.Parse(c.before, c.id+".json", c.id)
	if perr != nil {
		return nil // the claim's own input: cannot happen
	}
	bm := before.Metadata.Object("taskd")
	_, err = l.dir.Update(ctx, c.id, func(t *taskfile.Task) error {
		if !c.holds(t) {
			return errNotRunnable // someone else's change: left as it is
		}
		if _, err := task.Move(t, task.Withdraw); err != nil {
			return err
		}
		m := task.Meta(t)
		for _, k := range claimFields[1:] {
			if v, ok := bm.Get(k); ok {
				m.Set(k, v)
			} else {
				m.Delete(k)
			}
		}
		return nil
	})
	if errors.Is(err, errNotRunnable) {
		return nil
	}
	return err
}

// notStarted handles a claimed attempt whose agent was kept from starting
// by cause: cancelled by its task, it is recorded as cancelled; otherwise
// (the daemon stops, the list is refused or gone, the file changed or was
// removed) what was
// prepared for it is removed and the claim is taken back, so the file says
// what it said before and the task is decided on again as it says.
func (d *Daemon) notStarted(ctx context.Context, l *list, c *claimedAttempt, a *agent.Attempt, cause error) (*taskfile.Task, error) {
	if a != nil {
		if err := removePrepared(a); err != nil {
			d.log.Warn("remove an unused run folder", "list", l.id, "task", c.id, "err", err)
		}
	}
	if errors.Is(cause, agent.ErrCancelled) {
		res := agent.Result{Error: "cancelled before it started", ExitCode: -1}
		res.Summary = res.Error
		l.events.Append(eventlog.Event{Type: eventlog.TaskStarted, List: l.id, Task: c.id, Parent: c.spec.Parent, Attempt: c.spec.Attempt})
		return d.finish(ctx, l, c.id, c.spec, res, agent.Cancelled)
	}
	wctx, cancel := persistCtx(ctx)
	defer cancel()
	if err := c.withdraw(wctx, l); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("take back the claim of attempt %d: %w", c.spec.Attempt, err)
	}
	if errors.Is(cause, errClaimChanged) {
		return nil, errClaimChanged // runTask decides on the file as it now says
	}
	return nil, errNotRunnable
}

// removePrepared removes what attempt a, which never started, prepared:
// the files it wrote in its run folder, and the folder itself if it made
// it (one an earlier run of the same attempt number left stays).
func removePrepared(a *agent.Attempt) error {
	base, dir := a.ListDir, a.Dir()
	names := []string{"cmd.json", "prompt.md", "stdout.log", "stderr.log"}
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
