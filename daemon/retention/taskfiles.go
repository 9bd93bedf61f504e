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
	// Each file is read, and decided on, alone: what is kept of it is its
	// summary, not the task, so a list of many ended tasks costs little
	// memory.
	sums := make(map[string]*summary, len(ids))
	for _, id := range ids {
		t, err := dir.Read(id)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // removed meanwhile
		case err != nil:
			return nil, fmt.Errorf("task %s cannot be read, and might need any other: %w", id, err)
		}
		sums[id] = summarize(dir, t, p, now)
	}
	kept := needed(sums)
	var out []TaskRemoval
	for _, id := range ids {
		if s := sums[id]; s != nil && !kept[id] && s.removal != "" {
			out = append(out, TaskRemoval{ID: id, Why: s.removal})
		}
	}
	return out, nil
}

// A summary is what PlanTasks keeps of a task file: whether the task has
// ended, its parent, whether it is a schedule, the ids it needs if it
// has not ended, and why policy p removes it if p does.
type summary struct {
	ended, schedule bool
	parent          string
	needs           []string // its blockers, its children, its schedule's last run
	removal         string   // why it goes ("": it stays)
}

// summarize is task t's summary under policy p at now.
func summarize(dir *taskfile.Dir, t *taskfile.Task, p TaskPolicy, now time.Time) *summary {
	s := &summary{ended: Ended(t), schedule: isSchedule(t), parent: parentOf(t)}
	if s.ended {
		s.removal, _ = expired(dir, t, p, now)
		return s
	}
	s.needs = append(s.needs, t.BlockedBy...)
	ch := task.RecordOf(t).Children
	for _, coll := range []string{"queued", "parallel", "sequential", "done"} {
		s.needs = append(s.needs, task.Strings(ch, coll)...)
	}
	if r := recur.Of(t); r.LastRun != "" {
		s.needs = append(s.needs, r.LastRun)
	}
	return s
}

// needed returns the ids the tasks that have not ended need.
func needed(sums map[string]*summary) map[string]bool {
	kept := map[string]bool{}
	for id, s := range sums {
		if s.ended {
			continue
		}
		kept[id] = true
		for _, n := range s.needs {
			kept[n] = true
		}
		// Its ancestors: the tree it is in stays whole.
		seen := map[string]bool{id: true}
		for p := s.parent; p != "" && !seen[p] && sums[p] != nil; p = sums[p].parent {
			seen[p], kept[p] = true, true
		}
	}
	// The children of a task that has not ended: it may read their
	// results.
	for id, s := range sums {
		if p := sums[s.parent]; s.parent != "" && p != nil && !p.ended && !p.schedule {
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
