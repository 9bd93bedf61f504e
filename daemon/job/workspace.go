package job

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"syscall"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/daemon/worktree"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// budget is what an attempt of a task with spec sp, run by profile prof,
// may spend: the task's maxTurns and maxCostUsd, else its list's, else
// the profile's (docs/agents.md).
func (j *Job) budget(sp task.Spec, prof *config.Profile) agent.Budget {
	l := j.Config.ListSettings[j.List.ID]
	b := agent.Budget{MaxTurns: sp.MaxTurns, MaxCostUSD: sp.MaxCostUSD}
	if b.MaxTurns == 0 {
		b.MaxTurns = cmpOr(l.MaxTurns, prof.MaxTurns)
	}
	if b.MaxCostUSD == 0 {
		b.MaxCostUSD = cmpOr(l.MaxCostUSD, prof.MaxCostUSD)
	}
	return b
}

func cmpOr[T int | float64](a, b T) T {
	if a != 0 {
		return a
	}
	return b
}

// WorkspaceOf returns the git worktree task t records
// (metadata.taskd.workspace), or false.
func WorkspaceOf(t *taskfile.Task) (worktree.Worktree, bool) {
	var w worktree.Worktree
	v, ok := t.Metadata.Object("taskd").Get("workspace")
	if !ok || v == nil {
		return w, false
	}
	if json.Unmarshal(taskfile.AppendJSON(nil, v), &w) != nil || w.Path == "" {
		return w, false
	}
	return w, true
}

// workspace gives task t (metadata.taskd.worktree) its git worktree, made
// from the repository at cwd the first time (its branch starting at its
// parent's, when the parent has one), found again after; the task file
// records it (metadata.taskd.workspace). It returns the directory the
// agent runs in: cwd's place in the worktree.
func (j *Job) workspace(t *taskfile.Task, sp task.Spec, cwd string) (string, error) {
	if w, ok := WorkspaceOf(t); ok && w.Path == area.WorktreeDir(j.List.Path(), t.ID) {
		if fd, err := fsroot.OpenDirFD(j.List.Path(), w.Path, false); err == nil {
			syscall.Close(fd)
			return w.Dir, nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), worktree.Timeout)
	defer cancel()
	if err := fsroot.MkdirAll(j.List.Path(), filepath.Dir(area.WorktreeDir(j.List.Path(), t.ID))); err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	base := ""
	if sp.Parent != "" {
		if p, err := j.List.Dir.Read(sp.Parent); err == nil {
			if pw, ok := WorkspaceOf(p); ok {
				base = pw.Branch
			}
		}
	}
	w, err := worktree.Create(ctx, cwd, area.WorktreeDir(j.List.Path(), t.ID), worktree.Branch(j.List.ID, t.ID), base)
	if err != nil {
		return "", fmt.Errorf("metadata.taskd.worktree: %w", err)
	}
	wctx, wcancel := WriteContext(ctx)
	defer wcancel()
	if _, err := j.List.Dir.Update(wctx, t.ID, func(t *taskfile.Task) error {
		task.Meta(t).Set("workspace", asValue(w))
		return nil
	}); err != nil {
		return "", fmt.Errorf("record the worktree: %w", err)
	}
	return w.Dir, nil
}
