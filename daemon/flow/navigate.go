package flow

// This file connects the pure navigator to task files: it converts a parsed
// task into the navigator's view, applies a navigation's write-through to a
// task, and performs a whole Navigate call on a task file (the function
// behind `taskd navigate`).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/taskfile"
)

// navigatorKeys are the metadata keys the navigator reads.
var navigatorKeys = [...]string{"workflowType", "currentStep", "retryCount", "userDescription", "autonomy"}

// NavigatorTask returns the navigator's view of a parsed task file whose
// name is stem+".json". Only the metadata keys the navigator reads are
// copied; the task is not modified.
func NavigatorTask(t *taskfile.Task, stem string) *navigator.Task {
	nt := &navigator.Task{Stem: stem}
	if t.Has("id") || t.Raw() == nil && t.ID != "" {
		// taskfile refuses files whose id differs from their name, so an id
		// that is present equals the stem. (A task not read from a file has
		// the id it will be written with.)
		nt.ID, nt.HasID = t.ID, true
	}
	if t.Metadata != nil {
		nt.Metadata = make(map[string]any, len(navigatorKeys))
		for _, k := range navigatorKeys {
			if v, ok := t.Metadata.Get(k); ok {
				nt.Metadata[k] = v
			}
		}
	}
	return nt
}

// ApplyWriteThrough applies a navigation's write-through to t: the id,
// the metadata keys (each keeps its position if present and is appended
// otherwise, as flow's shallow merge does) and, in full mode, subject,
// activeForm and description. A nil or WriteNone write-through changes
// nothing.
func ApplyWriteThrough(t *taskfile.Task, wt *navigator.WriteThrough) {
	if wt == nil || wt.Mode == navigator.WriteNone {
		return
	}
	md := t.EnsureMetadata()
	for _, f := range wt.Metadata {
		md.Set(f.Key, f.Value)
	}
	t.ID = wt.ID
	if wt.Mode != navigator.WriteFull {
		return
	}
	t.Subject = wt.Subject
	t.ActiveForm = wt.ActiveForm
	if wt.SetDescription {
		t.Description = wt.Description
	}
}

// NavigateFileOptions adjusts NavigateFile.
type NavigateFileOptions struct {
	// RecordStart makes a Start-mode call record its first step in the task
	// (navigator.StartWriteThrough), as flow's orchestrator does when it
	// creates the task. Flow's Navigate itself writes nothing in Start mode.
	RecordStart bool
}

// errNoWrite stops a taskfile update that has nothing to write.
var errNoWrite = errors.New("nothing to write")

// NavigateFile performs one Navigate call on the task file at path (a
// leading "~/" is the home directory) and applies the write-through in one
// locked, atomic read-modify-write of the file (taskfile.Dir.Update), which
// re-reads the task and navigates again under the lock, so the response
// returned is the one that was written. Start and Current mode take no lock
// and write nothing (unless opts.RecordStart). It returns the response and
// the write-through that was applied (nil when nothing was written).
//
// A missing task file is navigator.TaskFileError (flow's "Task file not
// found"); a file taskd will not accept (not JSON, an id that disagrees with
// the file name, …) is the *taskfile.BadFileError that says how to fix it,
// and the file is left alone. A step without an edge for the result is a
// *navigator.NoMatchError, and nothing is written. So is a write that would
// make the file larger than a task file may be (taskfile.MaxSize), which no
// reader would accept: it is an error, and the file is left as it was.
func NavigateFile(ctx context.Context, cat navigator.Catalog, path string, in navigator.Input, opts NavigateFileOptions) (*navigator.Response, *navigator.WriteThrough, error) {
	path = TaskFilePath(path)
	stem, ok := strings.CutSuffix(filepath.Base(path), ".json")
	if !ok {
		return nil, nil, fmt.Errorf("navigate %s: a task file is named <id>.json", path)
	}
	navigate := func(t *taskfile.Task) (*navigator.Response, *navigator.WriteThrough, error) {
		nt := NavigatorTask(t, stem)
		resp, wt, err := navigator.Navigate(cat, nt, in)
		if err == nil && opts.RecordStart && !hasCurrentStep(nt) {
			wt = navigator.StartWriteThrough(nt, resp, in.Description)
		}
		return resp, wt, err
	}
	t, err := taskfile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, navigator.TaskFileError(path)
	}
	if err != nil {
		return nil, nil, err
	}
	resp, wt, err := navigate(t)
	if err != nil || wt.Mode == navigator.WriteNone {
		return resp, nil, err
	}
	dir, err := taskfile.Open(filepath.Dir(path))
	if err != nil {
		return nil, nil, err
	}
	_, err = dir.Update(ctx, stem, func(t *taskfile.Task) error {
		resp, wt, err = navigate(t)
		if err != nil {
			return err
		}
		if wt.Mode == navigator.WriteNone {
			return errNoWrite // changed under us: nothing to write after all
		}
		ApplyWriteThrough(t, wt)
		if n := len(t.Marshal()); n > taskfile.MaxSize {
			return fmt.Errorf("navigate %s: the task would be a file of %d bytes, and a task file holds at most %d: give a shorter description", path, n, taskfile.MaxSize)
		}
		return nil
	})
	switch {
	case errors.Is(err, errNoWrite):
		return resp, nil, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, navigator.TaskFileError(path)
	case err != nil:
		return nil, nil, err
	}
	return resp, wt, nil
}

// hasCurrentStep reports whether the task is past Start mode: its
// metadata has a truthy currentStep.
func hasCurrentStep(t *navigator.Task) bool {
	switch v := t.Metadata["currentStep"].(type) {
	case nil:
		return false
	case string:
		return v != ""
	case bool:
		return v
	case json.Number:
		f, err := v.Float64()
		return err != nil || f != 0
	}
	return true
}

// TaskFilePath returns the file NavigateFile navigates for path: a leading
// "~" or "~/" is the user's home directory. Flow does not expand "~" (a
// deliberate deviation: docs/navigator.md).
func TaskFilePath(path string) string {
	if path != "~" && !strings.HasPrefix(path, "~/") {
		return path
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return path
	}
	return filepath.Join(home, path[1:])
}
