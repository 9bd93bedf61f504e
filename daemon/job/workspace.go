package job

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/daemon/worktree"
	"github.com/taskd/taskd/taskfile"
)

// WorkspaceOf returns the git worktree task t records
// (metadata.taskd.workspace), or false.
func WorkspaceOf(t *taskfile.Task) (worktree.Worktree, bool) {
	var w worktree.Worktree
	v := task.FieldOf(t, func(r *task.Record) **taskfile.Object { return &r.Workspace })
	if v == nil {
		return w, false
	}
	if json.Unmarshal(taskfile.AppendJSON(nil, v), &w) != nil || w.Path == "" {
		return w, false
	}
	return w, true
}

// Worktrees is where the daemon of cfg makes its tasks' git worktrees:
// in its state directory, for its root (docs/agents.md).
func Worktrees(cfg *config.Config) worktree.Place {
	return worktree.Place{State: cfg.StateDir, Root: cfg.Root}
}

// WorktreeBase returns the directory the path rule checks the worktree
// at path of task id of the list at listDir from: taskd's state directory
// for a worktree where taskd makes them, the list directory for one an
// earlier taskd made in the list's .taskd/worktrees; false for any other
// path, which is not taskd's to touch.
func WorktreeBase(cfg *config.Config, listDir, list, id, path string) (string, bool) {
	switch {
	case Worktrees(cfg).Holds(path, list, id):
		return cfg.StateDir, true
	case filepath.Clean(path) == area.WorktreeDir(listDir, id):
		return listDir, true
	}
	return "", false
}

// workspace gives task t (metadata.taskd.worktree) its git worktree and
// returns the directory the agent runs in: cwd's place in the worktree.
// The worktree is made from the repository at cwd the first time, on the
// task's branch (starting at its parent's branch, when the parent has
// one), and found again after; the task file records it
// (metadata.taskd.workspace). A worktree an earlier taskd made under the
// list's .taskd (where Claude Code cannot edit) is moved to where taskd
// makes them now, with its branch and its uncommitted work.
func (j *Job) workspace(t *taskfile.Task, sp task.Spec, cwd string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*worktree.Timeout)
	defer cancel()
	place := Worktrees(j.Config)
	path := place.Path(j.List.ID, t.ID)
	branch := worktree.Branch(j.List.ID, t.ID)
	w, recorded := WorkspaceOf(t)
	if recorded && worktree.TaskBranch(w.Branch, j.List.ID, t.ID) {
		branch = w.Branch // a task made by an earlier taskd keeps its branch
	} else {
		recorded = false
	}
	if recorded && filepath.Clean(w.Path) == area.WorktreeDir(j.List.Path(), t.ID) {
		if _, err := os.Lstat(w.Path); err == nil {
			moved, err := worktree.Move(ctx, j.List.Path(), w, place.State, path)
			if err != nil {
				return "", fmt.Errorf("metadata.taskd.worktree: move the worktree an earlier taskd made in the list's .taskd: %w", err)
			}
			return moved.Dir, j.recordWorkspace(ctx, t.ID, moved)
		}
	}
	from := ""
	if sp.Parent != "" {
		if p, err := j.List.Dir.Read(sp.Parent); err == nil {
			if pw, ok := WorkspaceOf(p); ok && worktree.TaskBranch(pw.Branch, j.List.ID, sp.Parent) {
				from = pw.Branch
			}
		}
	}
	made, err := worktree.Create(ctx, place.State, worktree.Spec{Dir: cwd, Path: path, Branch: branch, From: from})
	if err != nil {
		return "", fmt.Errorf("metadata.taskd.worktree: %w", err)
	}
	if recorded && made.Base == "" {
		// Its branch was there: it keeps the start and the work recorded.
		made.Base, made.Commit = w.Base, w.Commit
		made.FilesChanged, made.Insertions, made.Deletions = w.FilesChanged, w.Insertions, w.Deletions
	}
	if recorded && made == w {
		return made.Dir, nil
	}
	return made.Dir, j.recordWorkspace(ctx, t.ID, made)
}

// recordWorkspace writes w into task id's metadata.taskd.workspace.
func (j *Job) recordWorkspace(ctx context.Context, id string, w worktree.Worktree) error {
	wctx, cancel := WriteContext(ctx)
	defer cancel()
	if _, err := j.List.Dir.Update(wctx, id, func(t *taskfile.Task) error {
		task.Change(t, func(r *task.Record) { r.Workspace = task.Object(asValue(w)) })
		return nil
	}); err != nil {
		return fmt.Errorf("record the worktree: %w", err)
	}
	return nil
}

// CommitWork commits what the agent left in the job's task's git
// worktree to the task's branch, if the task has one, and records the
// commit and its diffstat in metadata.taskd.workspace (commit,
// filesChanged, insertions, deletions; no commit when nothing changed).
// The message is the task's subject, a blank line and summary (the
// result's summary; "": the one the task records). It is called when an attempt or a workflow succeeds,
// before the success is written: what follows the task (its follow-ups,
// a child it starts, a parent's next attempt, a person) finds the work on
// the branch. A daemon that stops meanwhile lets it finish. An error
// means the work is not committed (the worktree refused, git failed): the
// task has not succeeded.
func (j *Job) CommitWork(ctx context.Context, sp task.Spec, summary string) error {
	t, err := j.List.Dir.Read(j.ID)
	if err != nil {
		return err
	}
	return j.CommitWorkOf(ctx, t, sp, summary)
}

// CommitWorkOf is CommitWork of t, the job's task as its caller has just
// read it: the file is not read again.
func (j *Job) CommitWorkOf(ctx context.Context, t *taskfile.Task, sp task.Spec, summary string) error {
	if t.ID != j.ID {
		return fmt.Errorf("commit the task's work: given task %s, not the job's %s", t.ID, j.ID)
	}
	w, ok := WorkspaceOf(t)
	if !ok {
		return nil
	}
	base, ok := WorktreeBase(j.Config, j.List.Path(), j.List.ID, t.ID, w.Path)
	if !ok || !worktree.TaskBranch(w.Branch, j.List.ID, t.ID) {
		return fmt.Errorf("commit the task's work: metadata.taskd.workspace names %s on branch %s, not a worktree taskd made for the task", w.Path, w.Branch)
	}
	if summary == "" {
		summary, _ = task.RecordOf(t).Result.String("summary")
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*worktree.Timeout)
	defer cancel()
	done, err := worktree.Commit(ctx, base, w, CommitMessage(t, j.List.ID, summary))
	if err != nil {
		return fmt.Errorf("commit the task's work to branch %s: %w", w.Branch, err)
	}
	if done == w {
		return nil
	}
	return j.Persist(ctx, "the commit of the task's work is not recorded yet", sp.Parent, func(wctx context.Context) error {
		_, err := j.List.Dir.Update(wctx, j.ID, func(t *taskfile.Task) error {
			task.Change(t, func(r *task.Record) { r.Workspace = task.Object(asValue(done)) })
			return nil
		})
		return err
	})
}

// CommitMessage is the message of the commit of task t's work: its
// subject, a blank line, and summary.
func CommitMessage(t *taskfile.Task, list, summary string) string {
	subject := strings.TrimSpace(t.Subject)
	if subject == "" {
		subject = "taskd: task " + list + "/" + t.ID
	}
	summary = strings.TrimSpace(summary)
	if summary == "" || summary == subject {
		return subject
	}
	return subject + "\n\n" + summary
}
