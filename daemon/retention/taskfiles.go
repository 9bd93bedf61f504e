package retention

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
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

// A TaskInfo is what is known of one task file without reading it: the
// daemon fills it from its own last reading of the file, so that a pass
// of retention over many ended tasks reads none of them again.
type TaskInfo struct {
	ID string
	// Known says the fields below are what the file says; when false
	// (the file did not parse, was refused, or changed since it was
	// read), PlanKnown reads the file.
	Known bool
	// Owned: the task is taskd's. Ended: it will do nothing more unless
	// a person starts it again (see Ended). Schedule: it is a schedule.
	Owned, Ended, Schedule bool
	State                  task.State // taskd's task's state
	Parent                 string     // metadata.taskd.parent, else metadata.parentTaskId
	EndedAt                time.Time  // metadata.taskd.finishedAt; zero: the file's modification time
}

// InfoOf is what task t's file says of it.
func InfoOf(t *taskfile.Task) TaskInfo {
	owned, _ := task.Addressed(t)
	return TaskInfo{
		ID: t.ID, Known: true, Owned: owned, Ended: Ended(t), Schedule: isSchedule(t),
		State: task.Of(t), Parent: ParentOf(t), EndedAt: task.RecordOf(t).FinishedAt,
	}
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
// there, nothing is planned. Every file is read; PlanKnown reads only
// those of tasks that have not ended.
func PlanTasks(dir *taskfile.Dir, p TaskPolicy, now time.Time) ([]TaskRemoval, error) {
	if p.Succeeded == 0 && p.Failed == 0 {
		return nil, nil
	}
	ids, err := dir.List()
	if err != nil {
		return nil, err
	}
	tasks := make([]TaskInfo, len(ids))
	for i, id := range ids {
		tasks[i].ID = id
	}
	return PlanKnown(dir, p, now, tasks)
}

// PlanKnown is PlanTasks over the tasks of dir as tasks says they are:
// the file of a task known to have ended is not read (when it goes, it
// is read under its lock first: StillExpired); the file of every other
// task is, for what it needs, as PlanTasks reads it. A file not in tasks
// is neither read nor removed.
func PlanKnown(dir *taskfile.Dir, p TaskPolicy, now time.Time, tasks []TaskInfo) ([]TaskRemoval, error) {
	if p.Succeeded == 0 && p.Failed == 0 {
		return nil, nil
	}
	// Each file is decided on alone: what is kept of it is its summary,
	// not the task, so a list of many ended tasks costs little memory.
	sums := make(map[string]*summary, len(tasks))
	for _, k := range tasks {
		if k.Known && k.Ended {
			sums[k.ID] = summarize(dir, k, nil, p, now)
			continue
		}
		t, err := dir.Read(k.ID)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // removed meanwhile
		case err != nil:
			return nil, fmt.Errorf("task %s cannot be read, and might need any other: %w", k.ID, err)
		}
		sums[k.ID] = summarize(dir, InfoOf(t), t, p, now)
	}
	kept := needed(sums)
	var out []TaskRemoval
	for _, k := range tasks {
		if s := sums[k.ID]; s != nil && !kept[k.ID] && s.removal != "" {
			out = append(out, TaskRemoval{ID: k.ID, Why: s.removal})
			s.removal = "" // once, were an id twice in tasks
		}
	}
	slices.SortFunc(out, func(a, b TaskRemoval) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// A summary is what PlanKnown keeps of a task file: whether the task has
// ended, its parent, whether it is a schedule, the ids it needs if it
// has not ended, and why policy p removes it if p does.
type summary struct {
	ended, schedule bool
	parent          string
	needs           []string // its blockers, its children, its schedule's last run
	removal         string   // why it goes ("": it stays)
}

// summarize is the summary of task k under policy p at now; t is its
// file as read, nil for a task known to have ended.
func summarize(dir *taskfile.Dir, k TaskInfo, t *taskfile.Task, p TaskPolicy, now time.Time) *summary {
	s := &summary{ended: k.Ended, schedule: k.Schedule, parent: k.Parent}
	if s.ended {
		s.removal, _ = k.expired(dir, p, now)
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

// ParentOf is t's parent as retention follows it: metadata.taskd.parent,
// or a workflow branch's metadata.parentTaskId.
func ParentOf(t *taskfile.Task) string {
	if p, _ := t.Metadata.Object("taskd").String("parent"); p != "" {
		return p
	}
	p, _ := t.Metadata.String("parentTaskId")
	return p
}

// expired reports whether taskd's task k ended longer ago than p keeps
// it, and why it goes.
func (k TaskInfo) expired(dir *taskfile.Dir, p TaskPolicy, now time.Time) (string, bool) {
	if !k.Owned || !k.Ended {
		return "", false
	}
	keep, what := p.Failed, "ended ("+string(k.State)+")"
	if k.State == task.Succeeded {
		keep, what = p.Succeeded, "succeeded"
	}
	if keep == 0 {
		return "", false
	}
	age := now.Sub(k.endedAt(dir))
	if age <= keep {
		return "", false
	}
	return fmt.Sprintf("%s %s ago", what, Days(age)), true
}

// endedAt is when task k of dir ended: its metadata.taskd.finishedAt,
// else its file's modification time.
func (k TaskInfo) endedAt(dir *taskfile.Dir) time.Time {
	if !k.EndedAt.IsZero() {
		return k.EndedAt
	}
	if fi, err := os.Lstat(dir.File(k.ID)); err == nil {
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
		if _, ok := InfoOf(t).expired(dir, p, now); !ok {
			return errors.New("it changed: it is kept")
		}
		return nil
	}
}
