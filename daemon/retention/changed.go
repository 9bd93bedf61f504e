package retention

import (
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/taskfile"
)

// PlanSince is PlanKnown from tasks, what was known of dir's tasks at
// since: if that removes anything, the list's files are looked at again
// (one lstat each, no read), and it plans again with those changed at or
// after since (a write, a rename into place: their status-change time)
// and those tasks does not name (made since) read. A task started again
// since (taskd retry, an edit back to pending), or made since, so keeps
// what it needs — its blockers, the tasks above it — where only the task
// removed is checked under its lock (StillExpired).
func PlanSince(dir *taskfile.Dir, p TaskPolicy, now time.Time, tasks []TaskInfo, since time.Time) ([]TaskRemoval, error) {
	rs, err := PlanKnown(dir, p, now, tasks)
	if err != nil || len(rs) == 0 {
		return rs, err
	}
	tasks, changed, err := changedSince(dir, tasks, since)
	if err != nil || !changed {
		return rs, err
	}
	return PlanKnown(dir, p, now, tasks)
}

// changedSince is tasks with the files of dir changed at or after since,
// and those tasks does not name, not known; changed reports whether there
// are any.
func changedSince(dir *taskfile.Dir, tasks []TaskInfo, since time.Time) (out []TaskInfo, changed bool, err error) {
	ids, err := dir.List()
	if err != nil {
		return nil, false, err
	}
	byID := func(a, b TaskInfo) int { return strings.Compare(a.ID, b.ID) }
	out = slices.Clone(tasks)
	slices.SortFunc(out, byID)
	n := len(out)
	for _, id := range ids {
		i, found := slices.BinarySearchFunc(out[:n], TaskInfo{ID: id}, byID)
		switch {
		case !found:
			out, changed = append(out, TaskInfo{ID: id}), true
		case out[i].Known:
			if at, ok := statusChanged(dir.File(id)); ok && !at.Before(since) {
				out[i], changed = TaskInfo{ID: id}, true
			}
		}
	}
	slices.SortFunc(out, byID)
	return out, changed, nil
}
