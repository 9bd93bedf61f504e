package job

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// A task is held when taskd cannot write what it must (package held): a
// claim that cannot be written starts no agent, and the end of an attempt
// that ran is kept in memory and written as soon as writing works again;
// its result is on disk meanwhile, in the run folder or, when that cannot
// take it, in the runtime directory (agent.WriteResult), so that a daemon
// stopped before the end is written records it at its next start instead
// of running the agent again.
// Held tasks are tried again later each time (HoldBackoff), never in a
// spin.

// HoldBackoff is the wait before try n+1 of a write that failed n times:
// 1s, 2s, 4s, 8s, then every 15s, so that a task is on its way within
// seconds of the disk having room again, and a disk full for hours costs
// a write every 15 seconds.
func HoldBackoff(n int) time.Duration {
	return min(time.Second<<min(max(n, 1)-1, 4), 15*time.Second)
}

// Hold marks task id of the job's list held for reason until retry, with
// parent its parent (if any). The first hold of a task is logged: a
// TaskHeld event, and ChildNeedsAttention on each task above it (best
// effort: the event log may be on the full disk too).
func (j *Job) Hold(reason string, retry time.Time, parent string) {
	if j.Held == nil {
		return
	}
	if j.Held.Hold(j.List.ID, j.ID, reason, retry) {
		j.Log.Warn("task held", "list", j.List.ID, "task", j.ID, "reason", reason)
		data := map[string]any{"reason": reason}
		if !retry.IsZero() {
			data["retryAt"] = task.Stamp(retry)
		}
		j.Emit(eventlog.Event{Type: eventlog.TaskHeld, Parent: parent, Data: data})
		j.TellAncestors(parent, "held", reason)
	}
}

// Unhold marks the job's task no longer held, logging TaskHoldEnded if it
// was.
func (j *Job) Unhold() {
	if j.Held == nil {
		return
	}
	if j.Held.Release(j.List.ID, j.ID) {
		j.Log.Info("task no longer held: the write worked", "list", j.List.ID, "task", j.ID)
		j.Emit(eventlog.Event{Type: eventlog.TaskHoldEnded})
	}
}

// Persist makes write, the record of something that already happened (an
// attempt's end, a step's result), until it succeeds: a write that fails
// for a reason outside the task (a full disk, a failing or read-only file
// system, a lock nobody can take, a file broken by hand) is tried again,
// later each time, the task held meanwhile with what (the record) and the
// error as the reason. Each try is bounded (WriteContext) and runs even
// while the daemon stops; no try follows once ctx is done. It returns
// write's last error: nil, one no retry can mend (the task file is gone,
// the task no longer asks for it), or the failure of the last try.
func (j *Job) Persist(ctx context.Context, what string, parent string, write func(ctx context.Context) error) error {
	held := false
	defer func() {
		if held {
			j.Unhold()
		}
	}()
	for n := 1; ; n++ {
		wctx, cancel := WriteContext(ctx)
		err := write(wctx)
		cancel()
		if err == nil || !Retryable(err) || ctx.Err() != nil {
			return err
		}
		wait := HoldBackoff(n)
		j.Hold(fmt.Sprintf("%s: %v", what, err), j.Now().Add(wait), parent)
		held = true
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// Retryable reports whether a write that failed with err may work later
// as it is: the file system failed it (fsroot.WriteFailed: a full disk, an
// I/O error, a read-only file system), a lock could not be taken, or the
// task file was broken by hand; not a task file that is gone, nor a task
// that no longer asks for the write, nor a path refused, nor an error of
// the write's own logic.
func Retryable(err error) bool {
	var bad *taskfile.BadFileError
	return fsroot.WriteFailed(err) || errors.Is(err, taskfile.ErrLocked) || errors.Is(err, taskfile.ErrBadLock) || errors.As(err, &bad)
}

// TellAncestors logs ChildNeedsAttention on each task above the job's
// (its parent, the parent's parent, …): the task now is in state (needs
// a person, failed, held), for reason. child is the task on the way down.
// The files of the ancestors are read; nothing is written.
func (j Scope) TellAncestors(parent, state, reason string) {
	child := j.ID
	seen := map[string]bool{j.ID: true}
	for p := parent; p != "" && !seen[p] && len(seen) < maxDepth; {
		seen[p] = true
		j.List.Emit(eventlog.Event{Type: eventlog.ChildNeedsAttention, Task: p,
			Data: map[string]any{"child": child, "descendant": j.ID, "state": state, "reason": reason}})
		pt, err := j.List.Dir.Read(p)
		if err != nil {
			return
		}
		child = p
		p, _ = pt.Metadata.Object("taskd").String("parent")
	}
}
