package area

import (
	"path/filepath"
	"strconv"
)

// The area's layout, relative to its list directory. Every path taskd
// makes inside a list is built here, from ids checked where they entered
// (task.CheckIDs, taskfile.ValidID), and opened through package fsroot.

// RelRunDir is the run folder of attempt n of task id, relative to the
// list directory, as a task file records it (metadata.taskd.runDir).
func RelRunDir(id string, n int) string {
	return filepath.Join(Name, "runs", id, strconv.Itoa(n))
}

// RunDir is the run folder of attempt n of task id of the list at listDir.
func RunDir(listDir, id string, n int) string {
	return filepath.Join(listDir, RelRunDir(id, n))
}

// RunsDir is the folder of task id's run folders.
func RunsDir(listDir, id string) string {
	return filepath.Join(listDir, Name, "runs", id)
}

// InboxDir is the inbox of task id.
func InboxDir(listDir, id string) string {
	return filepath.Join(listDir, Name, "inbox", id)
}

// RejectNote is the note explaining why the file called name was refused.
func RejectNote(listDir, name string) string {
	return filepath.Join(listDir, Name, "rejected", name+".txt")
}

// RejectedDir is the folder of rejection notes.
func RejectedDir(listDir string) string {
	return filepath.Join(listDir, Name, "rejected")
}

// EventsFile is the list's event log.
func EventsFile(listDir string) string {
	return filepath.Join(listDir, Name, "events.jsonl")
}

// WorkflowsDir and CommandsDir hold the list's own workflows and command
// files.
func WorkflowsDir(listDir string) string { return filepath.Join(listDir, Name, "workflows") }

// CommandsDir holds the list's own command files.
func CommandsDir(listDir string) string { return filepath.Join(listDir, Name, "commands") }

// WorktreeDir is where an earlier taskd made task id's git worktree
// (metadata.taskd.worktree): under the task root, which is under
// ~/.claude, where Claude Code cannot edit. taskd now makes worktrees in
// its state directory (package worktree); one found here is moved there
// when its task runs again, and removed from here when the task is.
func WorktreeDir(listDir, id string) string { return filepath.Join(listDir, Name, "worktrees", id) }

// WorktreesDir holds the git worktrees an earlier taskd made for the
// list's tasks.
func WorktreesDir(listDir string) string { return filepath.Join(listDir, Name, "worktrees") }
