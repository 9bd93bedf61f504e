package status

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

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
	// "rejected" for a file the daemon will not run.
	State string
	// Error is a failed task's error, or the daemon's note on why it
	// refused the file, whole.
	Error string
	// Summary and CostUSD are the latest attempt's (metadata.taskd.result)
	// of a task that has ended.
	Summary string
	CostUSD *float64
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
		return Outcome{Ended: true, State: "rejected", Error: string(note)}
	}
	sp, err := task.ReadSpec(t)
	if err != nil {
		return Outcome{}
	}
	o := Outcome{State: string(sp.State)}
	switch {
	case sp.State.Ended():
		var r struct {
			Summary string   `json:"summary"`
			CostUSD *float64 `json:"costUsd"`
		}
		if v, ok := task.Meta(t).Get("result"); ok {
			json.Unmarshal(taskfile.AppendJSON(nil, v), &r)
		}
		o.Ended, o.OK = true, sp.State == task.Succeeded
		o.Summary, o.CostUSD = r.Summary, r.CostUSD
		if !o.OK {
			o.Error, _ = task.Meta(t).String("error")
		}
	case sp.State == task.NeedsHuman:
		o.NeedsHuman = true
	}
	return o
}
