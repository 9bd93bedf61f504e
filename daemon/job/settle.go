package job

import (
	"context"
	"fmt"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Settle records an end the loop decided without running the job's task:
// its status was set to completed by someone else while taskd had it in
// another state (it completes, and never runs again), or a task it is
// blockedBy failed for good or was cancelled (it fails, unless
// metadata.taskd.onBlockerFailure is "wait"). The file is read again under
// the lock; a task that no longer asks for either is left alone
// (ErrNotRunnable).
func (j *Job) Settle(ctx context.Context) (*taskfile.Task, error) {
	dir := j.List.Dir
	var sp task.Spec
	var from task.State
	var userDone bool
	var blocker, why string
	t, err := dir.Update(ctx, j.ID, func(t *taskfile.Task) error {
		s, err := task.ReadSpec(t)
		if err != nil {
			return ErrNotRunnable
		}
		sp, from = s, task.Of(t)
		m := task.Meta(t)
		now := j.Now()
		if UserCompleted(t) {
			userDone = true
			m.Set("completedBy", "user")
			m.Set("finishedAt", task.Stamp(now))
			_, err := task.Move(t, task.Complete)
			return err
		}
		userDone = false
		if cancelReaches(dir, t) {
			// Its blocker was cancelled with it (a task above it, the
			// origin of its return chain, or its own cancel the loop has
			// not seen yet): the cancel ends it, not the blocker rule.
			return ErrNotRunnable
		}
		blocker, why = FailedBlocker(dir, t, s)
		if blocker == "" {
			return ErrNotRunnable
		}
		if _, err := task.Move(t, task.FailBlocked); err != nil {
			return ErrNotRunnable
		}
		m.Set("error", why)
		m.Set("failedBlocker", blocker)
		m.Set("finishedAt", task.Stamp(now))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if userDone {
		j.Log.Info("task completed by its user; it does not run again", "list", j.List.ID, "task", j.ID, "state", from)
		j.Emit(eventlog.Event{Type: eventlog.TaskCompletedByUser, Parent: sp.Parent, Attempt: sp.Attempt, Data: map[string]any{"state": string(from)}})
	} else {
		j.Emit(eventlog.Event{Type: eventlog.TaskFailed, Parent: sp.Parent, Attempt: sp.Attempt,
			Data: map[string]any{"success": false, "error": why, "blocker": blocker}})
	}
	return t, nil
}

// cancelReaches reports whether a cancel reaches task t, as the files
// say: its own cancel, a task above it cancelled or asked to be
// (CancelCause), or, for a step of a return chain, the task that began the
// chain — one unit with its chain — cancelled or asked to be.
func cancelReaches(dir *taskfile.Dir, t *taskfile.Task) bool {
	if _, _, ok := CancelCause(dir, t); ok {
		return true
	}
	origin, _ := t.Metadata.Object("taskd").String("returnOf")
	if origin == "" || origin == t.ID {
		return false
	}
	ot, err := dir.Read(origin)
	if err != nil {
		return false
	}
	if s := task.Of(ot); s == task.Cancelled {
		return true
	}
	_, _, ok := CancelCause(dir, ot)
	return ok && !task.Of(ot).Ended()
}

// UserCompleted reports whether task t's status says completed while
// taskd had it in a state of its own that is not an end: a person (or
// Claude Code) completed it, and it never runs again.
func UserCompleted(t *taskfile.Task) bool {
	return t.Status == taskfile.StatusCompleted && UserCompletable(task.Of(t))
}

// UserCompletable reports whether a task in state s whose status a person
// set to completed is recorded as completed by them: it is in a state of
// taskd's own that is not an end.
func UserCompletable(s task.State) bool {
	_, _, err := task.Next(s, task.Complete)
	return err == nil && s != task.None
}

// completeByUser records, while the end of an attempt is written, that
// someone completed the task while it ran: it completes.
func completeByUser(t *taskfile.Task, m *taskfile.Object, now time.Time) error {
	m.Set("completedBy", "user")
	m.Set("finishedAt", task.Stamp(now))
	_, err := task.Record(t, task.Complete)
	return err
}

// FailedBlocker returns the first task t is blockedBy that failed for
// good (failed, timed out, stopped) or was cancelled, and t's error for it,
// unless t waits anyway (metadata.taskd.onBlockerFailure "wait") or is not
// waiting to run. A blocker whose status a person set to completed counts
// as done, whatever its state.
func FailedBlocker(dir *taskfile.Dir, t *taskfile.Task, sp task.Spec) (id, why string) {
	if st := t.Status; sp.OnBlockerFailure == "wait" || st != "" && st != taskfile.StatusPending {
		return "", "" // (a file without a status is pending, as the loop reads it)
	}
	if s := task.Of(t); s != task.None && s != task.Retrying {
		return "", ""
	}
	for _, b := range t.BlockedBy {
		bt, err := dir.Read(b)
		if err != nil || bt.Status == taskfile.StatusCompleted {
			continue
		}
		if s := task.Of(bt); BlockerFailed(s) {
			msg := fmt.Sprintf("not run: task %s, which it is blocked by, %s", b, endWords[s])
			if e, _ := bt.Metadata.Object("taskd").String("error"); e != "" {
				msg += " (" + e + ")"
			}
			return b, msg + `; to wait for it anyway, set metadata.taskd.onBlockerFailure to "wait"`
		}
	}
	return "", ""
}

// BlockerFailed reports whether a blocker in state s will never complete
// unless a person starts it again.
func BlockerFailed(s task.State) bool {
	switch s {
	case task.Failed, task.TimedOut, task.Stopped, task.Cancelled:
		return true
	}
	return false
}

var endWords = map[task.State]string{
	task.Failed: "failed", task.TimedOut: "timed out", task.Stopped: "was stopped", task.Cancelled: "was cancelled",
}
