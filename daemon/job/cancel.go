package job

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/taskd/taskd/daemon/children"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Cancelling is a tree operation. A task is cancelled by its own
// metadata.taskd.cancel, set by a person (taskd cancel), or by a task above
// it: before a task is recorded cancelled, each of its children that has
// not ended is given cancel too, with cancelledBy (the task whose cancel
// started it) and cancelCause (why), so the cancel reaches the whole
// subtree through the files: a running agent is stopped, a queued or
// waiting task is recorded cancelled, and after a restart nothing of it
// runs. A task whose parent is cancelled, or a queued child whose parent
// ended without starting it, is cancelled the same way even where no flag
// reached it. The error a cancelled task records says what it was doing.

// maxDepth bounds the walks up a tree of tasks (a parent cycle written by
// hand ends there).
const maxDepth = 64

// CancelCause says why task t must be cancelled, if it must: its own
// cancel (with the cancelledBy and cancelCause a task above it gave it, if
// any); a task above it that is cancelled or cancelling; or, for a queued
// child, a parent that ended (or is gone) without starting it. It reads
// the files of t's ancestors.
func CancelCause(dir *taskfile.Dir, t *taskfile.Task) (by, cause string, ok bool) {
	m := t.Metadata.Object("taskd")
	if c, _ := m.Bool("cancel"); c {
		rec := task.RecordOf(t)
		return rec.CancelledBy, rec.CancelCause, true
	}
	parent, _ := m.String("parent")
	seen := map[string]bool{t.ID: true}
	for p := parent; p != "" && !seen[p] && len(seen) < maxDepth; {
		seen[p] = true
		pt, err := dir.Read(p)
		if err != nil {
			break
		}
		pm := pt.Metadata.Object("taskd")
		flagged, _ := pm.Bool("cancel")
		if s := task.Of(pt); s == task.Cancelled || flagged && !s.Ended() {
			b := task.RecordOf(pt).CancelledBy
			if b == "" {
				b = p
			}
			return b, fmt.Sprintf("task %s above it was cancelled", b), true
		}
		p, _ = pm.String("parent")
	}
	if task.Of(t) == task.Queued && parent != "" {
		pt, err := dir.Read(parent)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return parent, fmt.Sprintf("its parent %s is gone", parent), true
		case err == nil && task.Of(pt).Ended():
			return parent, fmt.Sprintf("its parent %s ended (%s) without starting it", parent, task.Of(pt)), true
		}
	}
	return "", "", false
}

// CancelBelow gives cancel to each child of t that has not ended (its
// queued, parallel and sequential children and its fork's branches), with
// cancelledBy (t's own, else t) and the cause. It returns the writes that
// failed; t must not be recorded cancelled before every one is done.
func (j *Job) CancelBelow(ctx context.Context, t *taskfile.Task) error {
	by := task.RecordOf(t).CancelledBy
	if by == "" {
		by = t.ID
	}
	cause := fmt.Sprintf("task %s above it was cancelled", by)
	var errs []error
	for _, id := range Kids(t) {
		_, err := j.List.Dir.Update(ctx, id, func(c *taskfile.Task) error {
			cm := c.Metadata.Object("taskd")
			flagged, _ := cm.Bool("cancel")
			if s := task.Of(c); s.Ended() || flagged || c.Status == taskfile.StatusCompleted {
				return ErrNotRunnable // nothing to write
			}
			task.Meta(c).Set("cancel", true)
			rec := task.RecordOf(c)
			rec.CancelledBy, rec.CancelCause = by, cause
			task.Store(c, rec)
			return nil
		})
		var bad *taskfile.BadFileError
		if err != nil && !errors.Is(err, ErrNotRunnable) && !errors.Is(err, fs.ErrNotExist) && !errors.As(err, &bad) {
			errs = append(errs, fmt.Errorf("cancel child %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// Kids returns every child t names: queued, parallel and sequential
// children, and its fork's branches.
func Kids(t *taskfile.Task) []string {
	ids := children.WaitsFor(t)
	for _, id := range task.Strings(task.RecordOf(t).Children, children.Queued) {
		ids = append(ids, id)
	}
	return ids
}

// CancelIdle cancels the job's task, which is not running, for the cause
// CancelCause finds: its children first (CancelBelow), then the task, with
// an error that says what it was doing ("cancelled while waiting for 3
// children").
func (j *Job) CancelIdle(ctx context.Context) (*taskfile.Task, error) {
	dir := j.List.Dir
	cur, err := dir.Read(j.ID)
	if err != nil {
		return nil, err
	}
	if _, _, ok := CancelCause(dir, cur); !ok || !Cancellable(task.Of(cur)) {
		return nil, ErrNotRunnable
	}
	if err := j.CancelBelow(ctx, cur); err != nil {
		return nil, err
	}
	var sp task.Spec
	var msg string
	t, err := dir.Update(ctx, j.ID, func(t *taskfile.Task) error {
		s, err := task.ReadSpec(t)
		from := task.Of(t)
		if err != nil || !Cancellable(from) || t.Status == taskfile.StatusCompleted {
			return ErrNotRunnable
		}
		by, cause, ok := CancelCause(dir, t)
		if !ok {
			return ErrNotRunnable
		}
		sp = s
		task.Meta(t).Set("cancel", true)
		rec := task.RecordOf(t)
		if by != "" {
			rec.CancelledBy, rec.CancelCause = by, cause
		}
		msg = cancelError(dir, t, rec, from, s.Attempt)
		rec.Error, rec.FinishedAt = msg, j.Now()
		_, err = task.Apply(t, task.Cancel, rec)
		return err
	})
	if err != nil {
		return nil, err
	}
	j.Emit(eventlog.Event{Type: eventlog.TaskCancelled, Parent: sp.Parent, Attempt: sp.Attempt, Data: map[string]any{"error": msg}})
	return t, nil
}

// Cancellable reports whether a task in state s that is not running (nor
// starting: its job stops it) can be cancelled by metadata.taskd.cancel.
func Cancellable(s task.State) bool {
	_, _, err := task.Next(s, task.Cancel)
	return err == nil && !s.Claimed()
}

// cancelError is the error of task t, cancelled in state from (rec is its
// record, attempt its last attempt): why, if a task above it cancelled
// it, and what it was doing.
func cancelError(dir *taskfile.Dir, t *taskfile.Task, rec task.Record, from task.State, attempt int) string {
	doing := "before it ran"
	kids := reached(dir, t, rec)
	switch from {
	case task.Running:
		doing = fmt.Sprintf("while its agent ran (attempt %d)", attempt)
		if step, _ := t.Metadata.String("currentStep"); step != "" {
			doing = fmt.Sprintf("while its workflow ran step %s", step)
		}
		if kids > 0 {
			doing += fmt.Sprintf(", with %s running", count(kids, "child", "children"))
		}
	case task.Starting:
		doing = fmt.Sprintf("while it waited for a slot, before its agent started (attempt %d)", attempt)
	case task.Waiting:
		doing = "while waiting for " + count(kids, "child", "children")
		if steps := len(task.Strings(task.RecordOf(t).Children, children.Returns)); steps > 0 && kids == 0 {
			doing = fmt.Sprintf("while its return chain ran (%s)", count(steps, "step", "steps"))
		} else if kids == 0 {
			doing = "while waiting for the tasks it handed work to"
		}
	case task.NeedsHuman:
		doing = "while waiting for a person's answer"
	case task.Retrying:
		doing = fmt.Sprintf("while waiting to retry (after %s)", count(rec.Failures, "failure", "failures"))
	case task.Queued:
		doing = "while queued, before it ever ran"
	case task.Paused:
		doing = "while paused by a usage limit"
	default:
		if attempt > 0 {
			doing = fmt.Sprintf("before attempt %d ran", attempt+1)
		}
	}
	if cause := rec.CancelCause; cause != "" {
		return "cancelled because " + cause + ", " + doing
	}
	return "cancelled " + doing
}

// reached counts the children of task t (rec is its record) that had not
// ended when the cancel came: those still going, and those the cancel
// ended already (cancelled by the same task as t).
func reached(dir *taskfile.Dir, t *taskfile.Task, rec task.Record) int {
	by := rec.CancelledBy
	if by == "" {
		by = t.ID
	}
	ch := task.RecordOf(t).Children
	n := 0
	for _, coll := range []string{children.Parallel, children.Sequential} {
		for _, id := range task.Strings(ch, coll) {
			c, err := dir.Read(id)
			if err != nil {
				continue
			}
			cr := task.RecordOf(c)
			if !cr.State.Ended() || cr.State == task.Cancelled && cr.CancelledBy == by {
				n++
			}
		}
	}
	return n
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
