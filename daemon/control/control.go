// Package control is what a person (or a program on their behalf) does to
// tasks through their files: submit one, run it again, cancel it, answer
// it. Every change is a locked read-modify-write of the task file; the
// daemon notices it and acts.
package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// This file holds what taskd's commands do to task files on a person's (or
// an agent's) behalf. They are edits through taskfile, exactly what a person
// could do by hand; a running daemon notices them like any other edit.

// ErrNotTaskd is returned for a task that is not addressed to taskd.
var ErrNotTaskd = errors.New("not a taskd task (its owner is not taskd and it has no metadata.taskd)")

// OpenList opens list id under root, creating it (mode 0700) when create is
// set.
func OpenList(root, id string, create bool) (*taskfile.Dir, error) {
	if !taskfile.ValidID(id) {
		return nil, fmt.Errorf("list %q: a list name is 1-128 of A-Z a-z 0-9 _ -", id)
	}
	path := filepath.Join(root, id)
	if create {
		if err := os.MkdirAll(root, 0o700); err != nil {
			return nil, err
		}
		if err := fsroot.MkdirAll(root, id); err != nil {
			return nil, fmt.Errorf("list %s: %w", path, err)
		}
	}
	// A list is a directory of the root's own, as the daemon serves it:
	// a link in its place (to a directory anywhere) is not followed.
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("no list %q in %s", id, root)
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("list %s is a symbolic link: taskd does not follow links out of its root (%w)", path, fsroot.ErrLink)
	case !fi.IsDir():
		return nil, fmt.Errorf("list %s is not a directory", path)
	}
	return taskfile.Open(path)
}

// Submit writes a new task file into dir, with an id allocated as Claude Code
// allocates ids (or t.ID, if set), and returns it as written. A task larger
// than a task file may be (taskfile.MaxSize) is refused: no daemon would
// read it.
func Submit(ctx context.Context, dir *taskfile.Dir, t *taskfile.Task) (*taskfile.Task, error) {
	if t.Owner == "" && t.Metadata.Object("taskd") == nil {
		t.Owner = task.Owner
	}
	if t.ActiveForm == "" {
		t.ActiveForm = t.Subject
	}
	if n := len(t.Marshal()); n > taskfile.MaxSize {
		return nil, fmt.Errorf("the task would be a file of %d bytes, and a task file holds at most %d: put the long text in a file and /read it from the prompt", n, taskfile.MaxSize)
	}
	return dir.Create(ctx, t)
}

// StartTask makes task id runnable again: a failed, cancelled, timed-out or
// stopped task is retried from scratch (its failure count reset), a queued
// child is released, a completed task is run again. A running task is left
// alone (ErrRunning).
func StartTask(ctx context.Context, dir *taskfile.Dir, id string) (*taskfile.Task, error) {
	return dir.Update(ctx, id, func(t *taskfile.Task) error {
		if err := reopen(t, id, nil); err != nil {
			return err
		}
		rec := task.RecordOf(t)
		rec.Failures, rec.Error, rec.RetryAt = 0, "", time.Time{}
		rec.Hold, rec.Iteration, rec.GuardAt, rec.RetryOf = nil, 0, 0, 0
		task.Store(t, rec)
		m := task.Meta(t)
		for _, k := range []string{"cancel", "resolve", "resolveNote"} {
			m.Delete(k)
		}
		return nil
	})
}

// reopen moves task t (id) back to pending for StartTask and RestartTask:
// refused if it is not taskd's, runs or waits for its children, or refuse
// (if not nil) says no.
func reopen(t *taskfile.Task, id string, refuse func(*taskfile.Task) error) error {
	if ok, _ := task.Addressed(t); !ok {
		return ErrNotTaskd
	}
	sp, err := task.ReadSpec(t)
	if err != nil {
		return err
	}
	if sp.State.Active() {
		return fmt.Errorf("task %s is %s; cancel it first (taskd cancel)", id, sp.State)
	}
	if refuse != nil {
		if err := refuse(t); err != nil {
			return err
		}
	}
	_, err = task.Move(t, task.Restart)
	return err
}

// CancelTask asks the daemon to cancel task id: a running agent gets SIGTERM
// (SIGKILL after the grace period), a waiting task is not started.
func CancelTask(ctx context.Context, dir *taskfile.Dir, id string) (*taskfile.Task, error) {
	return dir.Update(ctx, id, func(t *taskfile.Task) error {
		if ok, _ := task.Addressed(t); !ok && !refusedRunning(dir, id) {
			return ErrNotTaskd
		}
		if _, err := task.ReadSpec(t); err != nil && !task.Of(t).Active() {
			return err
		}
		// A file the daemon rejects is cancelled all the same while its
		// attempt is under way: its agent runs on until a cancel stops it.
		switch st := task.Of(t); st {
		case task.Succeeded, task.Failed, task.Cancelled, task.TimedOut:
			return fmt.Errorf("task %s has already ended (%s)", id, st)
		}
		task.Meta(t).Set("cancel", true)
		return nil
	})
}

// refusedRunning reports whether the daemon rejected the file of task id
// of dir while the task's agent runs: a task taken from taskd meanwhile
// (no longer addressed to it) is cancelled all the same.
func refusedRunning(dir *taskfile.Dir, id string) bool {
	_, err := os.Lstat(area.RejectNote(dir.Path(), id+".json"))
	return err == nil
}

// Resolve answers a task that waits for a person: answer must be one of
// metadata.taskd.hitl.options. The daemon continues the task.
func Resolve(ctx context.Context, dir *taskfile.Dir, id, answer string) (*taskfile.Task, error) {
	return ResolveNote(ctx, dir, id, answer, "")
}

// ResolveNote is Resolve with a person's note (metadata.taskd.resolveNote),
// which the daemon puts into the prompt of the step that runs next. A
// workflow task that completed at a stage boundary (metadata.taskd.boundary)
// takes the answer continue, which walks on past the boundary.
func ResolveNote(ctx context.Context, dir *taskfile.Dir, id, answer, note string) (*taskfile.Task, error) {
	return dir.Update(ctx, id, func(t *taskfile.Task) error {
		sp, err := task.ReadSpec(t)
		if err != nil {
			return err
		}
		m := task.Meta(t)
		var options []string
		switch {
		case sp.State == task.NeedsHuman:
			options = task.Strings(task.RecordOf(t).Hold, "options")
		case sp.State == task.Succeeded && task.RecordOf(t).Boundary != nil:
			options = task.Strings(task.RecordOf(t).Boundary, "options")
			if len(options) == 0 {
				options = []string{"continue"}
			}
		case sp.State == task.Succeeded:
			return fmt.Errorf("task %s has completed, and not at a stage boundary: there is nothing to continue; run it again with taskd retry, or from its first step with taskd restart", id)
		case sp.State.Ended():
			return fmt.Errorf("task %s does not wait for an answer (its state is %q); it has ended: run it again with taskd retry", id, sp.State)
		default:
			return fmt.Errorf("task %s does not wait for an answer (its state is %q)", id, sp.State)
		}
		if len(options) > 0 && !slices.Contains(options, answer) {
			return fmt.Errorf("%q is not an answer task %s accepts; answer one of: %s", answer, id, strings.Join(options, ", "))
		}
		m.Set("resolve", answer)
		if note = strings.TrimSpace(note); note != "" {
			m.Set("resolveNote", note)
		}
		return nil
	})
}
