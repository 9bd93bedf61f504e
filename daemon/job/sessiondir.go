package job

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/taskd/taskd/daemon/handoff"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// A task that a Claude Code session wrote into its own list (the list
// named by the session's id) and that names no cwd runs in the session's
// project directory (package handoff), unless the list's configuration
// names a cwd. The claim records the directory found as
// metadata.taskd.cwd, so that every later attempt, and the children the
// task pushes, run there too and taskd status shows it; when it cannot
// be found the task runs in the home directory, and the claim records
// why in metadata.taskd.cwdNote.

// sessionDir returns the project directory of the Claude Code session
// whose list the job's task is in, or why there is none (note); both are
// empty when the list is not a session's or its configuration names a
// cwd.
func (j Scope) sessionDir() (dir, note string) {
	if j.Config.ListSettings[j.List.ID].Cwd != "" || !handoff.IsSession(j.List.ID) {
		return "", ""
	}
	dir, err := handoff.ProjectDir(handoff.ProjectsDir(filepath.Dir(j.List.Path())), j.List.ID)
	if errors.Is(err, handoff.ErrNotSession) {
		return "", ""
	}
	if err != nil {
		return "", fmt.Sprintf("the list is named like a Claude Code session, but that session's directory is not known (%v): the task runs in the home directory; set metadata.taskd.cwd to choose", err)
	}
	return dir, ""
}

// recordSessionDir records in task t, being claimed with spec sp, where a
// task that names no cwd runs when its list is a Claude Code session's:
// the session's directory as cwd, or the note that says why it runs in
// the home directory.
func (j *Job) recordSessionDir(t *taskfile.Task, sp *task.Spec) {
	if sp.Cwd != "" {
		return
	}
	dir, note := j.sessionDir()
	switch {
	case dir != "":
		task.Meta(t).Set("cwd", dir)
		task.Change(t, func(r *task.Record) { r.CwdNote = "" })
		sp.Cwd = dir
	case note != "":
		task.Change(t, func(r *task.Record) { r.CwdNote = note })
	}
}
