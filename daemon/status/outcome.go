package status

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// An Outcome is how far a task has got, for those who wait for it to end
// (taskd wait, the MCP wait tool).
type Outcome struct {
	Ended bool // it has ended, is gone, or the daemon refused it
	OK    bool // it ended in success
	// State is its metadata.taskd.state ("completed" for a task that is
	// not taskd's), "missing" for a task whose file does not exist,
	// "rejected" for a file the daemon will not run, or "not_taskd" for a
	// task of Claude Code's own that is not completed.
	State string
	// Error is a failed task's error, or the first line of the reason the
	// daemon refused the file.
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
//
// A task no daemon will run has ended, as a failure with the reason: one
// the daemon refused (its note in .taskd/rejected, State "rejected"), a
// file taskd does not read (a link, not a regular file, another user's;
// "rejected" too), and a task not addressed to taskd (Claude Code's own,
// State "not_taskd") unless it is completed.
func ReadOutcome(listDir, id string) Outcome {
	file := filepath.Join(listDir, id+".json")
	t, err := taskfile.ReadFile(file)
	var bad *taskfile.BadFileError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Outcome{Ended: true, State: "missing"}
	case err == nil || errors.As(err, &bad):
		if data, nerr := fsroot.ReadFile(listDir, area.RejectNote(listDir, id+".json"), 64<<10); nerr == nil {
			// The note's first line is "<file>: <the reason>".
			reason, _ := strings.CutPrefix(strings.TrimSpace(string(data)), file+": ")
			return Outcome{Ended: true, State: "rejected", Error: firstLine(reason)}
		}
	}
	switch {
	case bad != nil && !errors.Is(err, taskfile.ErrInvalidJSON) && !errors.Is(err, taskfile.ErrTooLarge):
		return Outcome{Ended: true, State: "rejected", Error: strings.TrimPrefix(bad.Error(), bad.Path+": ")}
	case err != nil:
		return Outcome{}
	}
	if owned, _ := task.Addressed(t); !owned {
		if t.Status == taskfile.StatusCompleted {
			return Outcome{Ended: true, OK: true, State: taskfile.StatusCompleted}
		}
		return Outcome{Ended: true, State: "not_taskd"}
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
		rec := task.RecordOf(t)
		if rec.Result != nil {
			json.Unmarshal(taskfile.AppendJSON(nil, rec.Result), &r)
		}
		o.Ended, o.OK = true, sp.State == task.Succeeded
		o.Summary, o.CostUSD = r.Summary, r.CostUSD
		if !o.OK {
			o.Error = rec.Error
		}
	case sp.State == task.NeedsHuman:
		o.NeedsHuman = true
	}
	return o
}
