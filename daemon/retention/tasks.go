package retention

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/taskd/taskd/daemon/area"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Tasks reports on the tasks of dir from their files, read as they are
// now: a task has ended when taskd recorded an end (succeeded, failed,
// cancelled, timed out, stopped), or when it is not taskd's and Claude
// Code marked it completed. A file that cannot be read counts as there and
// not ended.
func Tasks(dir *taskfile.Dir) func(id string) Task {
	return func(id string) Task {
		if !taskfile.ValidID(id) {
			return Task{Exists: true} // not a task of taskd's: not touched
		}
		t, err := dir.Read(id)
		if errors.Is(err, fs.ErrNotExist) {
			return Task{}
		}
		if err != nil {
			return Task{Exists: true}
		}
		return Task{Exists: true, Ended: Ended(t)}
	}
}

// Ended reports whether task t has ended: it will do nothing more unless a
// person starts it again.
func Ended(t *taskfile.Task) bool {
	if owned, _ := task.Addressed(t); !owned {
		return t.Status == taskfile.StatusCompleted
	}
	sp, err := task.ReadSpec(t)
	return err == nil && sp.State.Ended() && !sp.Cancel
}

// Known reports on the tasks of dir as tasks says they are, for Plan,
// reading no file of a task tasks knows: one known to have ended has
// ended, one known not to has not; the file of one not known is read
// (Tasks). A task not in tasks appeared since, and has not ended, while
// its file is there; it is gone when its file is.
func Known(dir *taskfile.Dir, tasks []TaskInfo) func(id string) Task {
	byID := func(a, b TaskInfo) int { return strings.Compare(a.ID, b.ID) }
	if !slices.IsSortedFunc(tasks, byID) {
		tasks = slices.Clone(tasks)
		slices.SortFunc(tasks, byID)
	}
	read := Tasks(dir)
	return func(id string) Task {
		i, found := slices.BinarySearchFunc(tasks, TaskInfo{ID: id}, byID)
		switch {
		case found && tasks[i].Known:
			return Task{Exists: true, Ended: tasks[i].Ended}
		case found || !taskfile.ValidID(id):
			return read(id)
		}
		if _, err := os.Lstat(dir.File(id)); errors.Is(err, fs.ErrNotExist) {
			return Task{}
		}
		return Task{Exists: true}
	}
}

// Confirm returns the removals of rs (Plan's) that task, asked again,
// still allows: what a task that has not ended now (started again since
// it was planned) left is kept. Each task is asked once.
func Confirm(rs []Removal, task func(id string) Task) []Removal {
	allowed := map[string]bool{}
	var out []Removal
	for _, r := range rs {
		id := ownerOf(r.Path)
		if id == "" {
			out = append(out, r) // not a task's
			continue
		}
		ok, asked := allowed[id]
		if !asked {
			t := task(id)
			ok = !t.Exists || t.Ended
			allowed[id] = ok
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}

// ownerOf is the id of the task whose run folders or inbox path rel
// (relative to the list directory) is in: .taskd/runs/<id>/... or
// .taskd/inbox/<id>.
func ownerOf(rel string) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) >= 3 && parts[0] == area.Name && (parts[1] == "runs" || parts[1] == "inbox") {
		return parts[2]
	}
	return ""
}
