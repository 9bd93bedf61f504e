package retention

import (
	"errors"
	"io/fs"

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
