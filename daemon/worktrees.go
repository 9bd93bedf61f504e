package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/retention"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/daemon/worktree"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// A task's git worktree (package worktree, docs/agents.md) goes when the
// task is cleaned up: its file deleted (taskd rm), archived (a fork's
// branches once joined), or ended longer ago than the retention policy
// keeps what ended tasks leave. Its branch always stays.

// leftOver is the message of the commit of what a worktree held,
// uncommitted, when it was removed.
const leftOver = `taskd: work left uncommitted in the worktree of task %s/%s

This is what the task's worktree held, not committed, when taskd removed
the worktree: the edits of an attempt that did not succeed, or changes made
after the task ended. The task's own work, when it succeeded, is in the
commits before this one.`

// removeWorktree removes task id's git worktree w in the background, if
// it is one taskd made (job.WorktreeBase): what was left uncommitted in it
// is committed to its branch, which stays (worktree.Remove). A worktree
// that fails the checks (a link planted at its path, a .git leading
// elsewhere, another branch checked out) is left as it is, with the
// reason in the log and, for a path refused, a PathRefused event, once for
// each reason.
func (d *Daemon) removeWorktree(l *job.List, id string, w worktree.Worktree) {
	base, ok := job.WorktreeBase(d.cfg, l.Path(), l.ID, id, w.Path)
	if !ok {
		return
	}
	if !worktree.TaskBranch(w.Branch, l.ID, id) {
		w.Branch = "" // unknown, or not the task's: any taskd branch will do
	}
	if _, busy := d.removing.LoadOrStore(w.Path, true); busy {
		return
	}
	d.chores.Add(1)
	go func() {
		defer d.chores.Done()
		defer d.removing.Delete(w.Path)
		ctx, cancel := context.WithTimeout(context.Background(), 4*worktree.Timeout)
		defer cancel()
		branch, err := worktree.Remove(ctx, base, w, fmtLeftOver(l.ID, id))
		if err != nil {
			if was, _ := d.leftAs.Swap(w.Path, err.Error()); was == err.Error() {
				return // reported already (retention looks again every hour)
			}
			d.log.Warn("a task's worktree is left where it is", "list", l.ID, "task", id, "path", w.Path, "err", err)
			if refusedPath(err) {
				l.Events.Append(eventlog.Event{Type: eventlog.PathRefused, List: l.ID, Task: id, Data: map[string]any{"error": err.Error()}})
			}
			return
		}
		d.leftAs.Delete(w.Path)
		if branch != "" {
			l.Events.Append(eventlog.Event{Type: eventlog.WorktreeRemoved, List: l.ID, Task: id, Data: map[string]any{"path": w.Path, "branch": branch}})
		}
	}()
}

func fmtLeftOver(list, id string) string {
	return fmt.Sprintf(leftOver, list, id)
}

// worktreePlaces are the directories list l's tasks' worktrees are in,
// each with the base the path rule checks it from: where taskd makes them
// and, for tasks of an earlier taskd, the list's .taskd/worktrees.
func (d *Daemon) worktreePlaces(l *job.List) [][2]string {
	return [][2]string{
		{d.cfg.StateDir, filepath.Join(job.Worktrees(d.cfg).Dir(), l.ID)},
		{l.Path(), area.WorktreesDir(l.Path())},
	}
}

// worktreeIDs returns the names in dir (inside base) that are task ids,
// none if it is missing or refused.
func worktreeIDs(base, dir string) []string {
	entries, err := fsroot.ReadDir(base, dir)
	if err != nil {
		return nil
	}
	var ids []string
	for _, e := range entries {
		if taskfile.ValidID(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	return ids
}

// sweepWorktrees removes the worktrees of list l's tasks whose files are
// gone (deleted while no daemon ran).
func (d *Daemon) sweepWorktrees(l *list) {
	if d.cfg.StateDir == "" {
		return
	}
	for _, p := range d.worktreePlaces(l.List) {
		for _, id := range worktreeIDs(p[0], p[1]) {
			if _, err := os.Lstat(l.Dir.File(id)); errors.Is(err, fs.ErrNotExist) {
				d.removeWorktree(l.List, id, worktree.Worktree{Path: filepath.Join(p[1], id)})
			}
		}
	}
}

// retainWorktrees removes the worktrees of list l's tasks that ended
// longer ago than p keeps what ended tasks leave (their finishedAt, else
// their file's time). Which did is what tasks says; the file of each
// such task is read again just before its worktree goes, and that of a
// task tasks does not know is read to decide. A worktree of a task not
// in tasks stays.
func (d *Daemon) retainWorktrees(l *job.List, p retention.Policy, now time.Time, tasks []retention.TaskInfo) {
	if d.cfg.StateDir == "" {
		return
	}
	byID := func(k retention.TaskInfo, id string) int { return strings.Compare(k.ID, id) }
	for _, place := range d.worktreePlaces(l) {
		for _, id := range worktreeIDs(place[0], place[1]) {
			i, found := slices.BinarySearchFunc(tasks, id, byID)
			if !found {
				continue
			}
			if k := tasks[i]; k.Known && (!k.Ended || !k.EndedAt.IsZero() && now.Sub(k.EndedAt) <= p.MaxAge) {
				continue
			}
			t, err := l.Dir.Read(id)
			if err != nil || !retention.Ended(t) || now.Sub(endedAt(l, t)) <= p.MaxAge {
				continue
			}
			w, _ := job.WorkspaceOf(t)
			if w.Path != filepath.Join(place[1], id) {
				w = worktree.Worktree{Path: filepath.Join(place[1], id)}
			}
			d.removeWorktree(l, id, w)
		}
	}
}

// endedAt is when task t ended: its finishedAt, else its file's time.
func endedAt(l *job.List, t *taskfile.Task) time.Time {
	if at := task.RecordOf(t).FinishedAt; !at.IsZero() {
		return at
	}
	if fi, err := os.Lstat(l.Dir.File(t.ID)); err == nil {
		return fi.ModTime()
	}
	return time.Now()
}
