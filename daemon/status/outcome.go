package status

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// An Outcome is how far a task has got, for those who wait for it to end
// (taskd wait, the MCP wait tool).
type Outcome struct {
	Ended bool // it has ended, is gone, or the daemon refused it
	OK    bool // it ended in success
	// State is its metadata.taskd.state ("completed" for a task that is
	// not taskd's), "missing" for a task whose file does not exist, or
	// "refused" for a file the daemon will not run.
	State string
	// Reason is the first line of a failed task's error, or of why the
	// daemon refused the file.
	Reason string
	// NeedsHuman is set while the task waits for a person's answer.
	NeedsHuman bool
}

// ReadOutcome reads task id of the list at listDir. A file that cannot be
// read for now (torn by a writer, being fixed by hand) is an Outcome that
// has not ended: read it again.
func ReadOutcome(listDir, id string) Outcome {
	t, err := taskfile.ReadFile(filepath.Join(listDir, id+".json"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Outcome{Ended: true, State: "missing"}
	case err != nil:
		return Outcome{}
	}
	if owned, _ := task.Addressed(t); !owned {
		if t.Status == taskfile.StatusCompleted {
			return Outcome{Ended: true, OK: true, State: taskfile.StatusCompleted}
		}
		return Outcome{}
	}
	if note, err := os.ReadFile(area.RejectNote(listDir, id+".json")); err == nil {
		return Outcome{Ended: true, State: "refused", Reason: firstLine(strings.TrimSpace(string(note)))}
	}
	sp, err := task.ReadSpec(t)
	if err != nil {
		return Outcome{}
	}
	o := Outcome{State: string(sp.State)}
	switch {
	case sp.State == task.Succeeded:
		o.Ended, o.OK = true, true
	case sp.State.Ended():
		o.Ended = true
		msg, _ := task.Meta(t).String("error")
		o.Reason = firstLine(strings.TrimSpace(msg))
	case sp.State == task.NeedsHuman:
		o.NeedsHuman = true
	}
	return o
}
