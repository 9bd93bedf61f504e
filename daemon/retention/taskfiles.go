package retention

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/taskd/taskd/daemon/recur"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// A TaskPolicy says how long the files of taskd's tasks are kept once
// they have ended: those that succeeded for Succeeded, those that ended
// otherwise (failed, timed out, stopped, cancelled) for Failed; 0 keeps
// them. Tasks that are not taskd's are never removed.
type TaskPolicy struct {
	Succeeded, Failed time.Duration
}

// A TaskRemoval is a task file the policy removes, with why.
type TaskRemoval struct {
	ID, Why string
}

// PlanTasks lists the task files of dir that policy p removes at now:
// taskd's tasks that ended longer ago than p keeps them (their
// metadata.taskd.finishedAt, else their file's time), unless a task that
// has not ended still needs them:
//
//   - a blocker named in its blockedBy;
//   - its parent, its ancestors, and its children;
//   - the last run of a schedule.
//
// The runs of a schedule are removed like any task, the last one kept.
// A file that cannot be read needs every id it might name: while one is
// there, nothing is planned.
func PlanTasks(dir *taskfile.Dir, p TaskPolicy, now time.Time) ([]TaskRemoval, error) {
	if p.Succeeded == 0 && p.Failed == 0 {
		return nil, nil
	}
	ids, err := dir.List()
	if err != nil {
		return nil, err
	}
	tasks := make(map[string]*taskfile.Task, len(ids))
	for _, id := range ids {
		t, err := dir.Read(id)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // removed meanwhile
		case err != nil:
			return nil, fmt.Errorf("task %s cannot be read, and might need any other: %w", id, err)
		}
		tasks[id] = t
	}
	kept := needed(tasks)
	var out []TaskRemoval
	for _, id := range ids {
		t := tasks[id]
		if t == nil || kept[id] {
			continue
		}
		if why, ok := expired(dir, t, p, now); ok {
			out = append(out, TaskRemoval{ID: id, Why: why})
		}
	}
	return out, nil
}

// needed returns the ids the tasks that have not ended need.
func needed(tasks map[string]*taskfile.Task) map[string]bool {
	kept := map[string]bool{}
	for id, t := range tasks {
		if Ended(t) {
			continue
		}
		kept[id] = true
		for _, b := range t.BlockedBy {
			kept[b] = true
		}
		ch := task.RecordOf(t).Children
		for _, coll := range []string{"queued", "parallel", "sequential", "done"} {
			for _, c := range task.Strings(ch, coll) {
				kept[c] = true
			}
		}
		if r := recur.Of(t); r.LastRun != "" {
			kept[r.LastRun] = true
		}
		// Its ancestors: the tree it is in stays whole.
		seen := map[string]bool{id: true}
		for p := parentOf(t); p != "" && !seen[p] && tasks[p] != nil; p = parentOf(tasks[p]) {
			seen[p], kept[p] = true, true
		}
	}
	// The children of a task that has not ended: it may read their
	// results.
	for id, t := range tasks {
		if p := parentOf(t); p != "" && tasks[p] != nil && !Ended(tasks[p]) && !isSchedule(tasks[p]) {
			kept[id] = true
		}
	}
	return kept
}

// isSchedule reports whether t is a schedule, whose runs it does not
// wait for.
func isSchedule(t *taskfile.Task) bool {
	s, _ := t.Metadata.Object("taskd").String("schedule")
	return s != ""
}

// parentOf is t's parent: metadata.taskd.parent, or a workflow branch's
// metadata.parentTaskId.
func parentOf(t *taskfile.Task) string {
	if p, _ := t.Metadata.Object("taskd").String("parent"); p != "" {
		return p
	}
	p, _ := t.Metadata.String("parentTaskId")
	return p
}

// expired reports whether taskd's task t ended longer ago than p keeps
// it, and why it goes.
func expired(dir *taskfile.Dir, t *taskfile.Task, p TaskPolicy, now time.Time) (string, bool) {
	if owned, _ := task.Addressed(t); !owned || !Ended(t) {
		return "", false
	}
	keep, what := p.Failed, "ended ("+string(task.Of(t))+")"
	if task.Of(t) == task.Succeeded {
		keep, what = p.Succeeded, "succeeded"
	}
	if keep == 0 {
		return "", false
	}
	age := now.Sub(EndedAt(dir, t))
	if age <= keep {
		return "", false
	}
	return fmt.Sprintf("%s %s ago", what, Days(age)), true
}

// EndedAt is when task t of dir ended: its metadata.taskd.finishedAt,
// else its file's modification time.
func EndedAt(dir *taskfile.Dir, t *taskfile.Task) time.Time {
	if at := task.RecordOf(t).FinishedAt; !at.IsZero() {
		return at
	}
	if fi, err := os.Lstat(dir.File(t.ID)); err == nil {
		return fi.ModTime()
	}
	return time.Time{}
}

// StillExpired is the check made under the task file's lock just before
// it is removed: the task has not been started again or changed into
// one p keeps.
func StillExpired(dir *taskfile.Dir, p TaskPolicy, now time.Time) func(*taskfile.Task) error {
	return func(t *taskfile.Task) error {
		if t == nil {
			return errors.New("it does not parse now: it is kept")
		}
		if _, ok := expired(dir, t, p, now); !ok {
			return errors.New("it changed: it is kept")
		}
		return nil
	}
}
