package status

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/daemon/worktree"
	"github.com/taskd/taskd/taskfile"
)

// Diff returns the work of task id of list under root, a task
// that runs in a git worktree of its own, as taskd diff shows it: a line
// beginning with '#' before each part; first what its branch holds since
// it started (the commits taskd made when it succeeded, and any the agent
// made), then, marked apart, what its worktree holds that is not
// committed. stat writes diffstats instead of patches. It changes
// nothing and runs none of the repository's hooks, filters or diff
// drivers (package worktree). It fails for a task that does not exist or
// has no worktree, and when the branch is not in the repository.
func Diff(ctx context.Context, root, list, id string, stat bool) (string, error) {
	var out strings.Builder
	ref := list + "/" + id
	listDir := filepath.Join(root, list)
	dir, err := taskfile.Open(listDir)
	if err != nil {
		return "", fmt.Errorf("list %s: %w", list, err)
	}
	t, err := dir.Read(id)
	if err != nil {
		return "", fmt.Errorf("task %s: %w", ref, err)
	}
	var w Worktree
	if !decode(task.RecordOf(t).Workspace, &w) || w.Path == "" {
		return "", fmt.Errorf("task %s has no git worktree (it runs in one with metadata.taskd.worktree: true, or taskd submit --worktree)", ref)
	}
	base, ok := worktree.StateOf(w.Path, root, list, id)
	if !ok && filepath.Clean(w.Path) == area.WorktreeDir(listDir, id) {
		base, ok = listDir, true // made by an earlier taskd
	}
	if !ok || !worktree.TaskBranch(w.Branch, list, id) {
		return "", fmt.Errorf("task %s records the worktree %s on branch %s, which is not one taskd made for it", ref, w.Path, w.Branch)
	}
	work, err := worktree.Diff(ctx, base, w, stat)
	if err != nil {
		return "", fmt.Errorf("task %s: %w", ref, err)
	}
	fmt.Fprintf(&out, "# %s · branch %s of %s · committed %s\n", ref, w.Branch, w.Repo, work.Range)
	if work.Committed == "" {
		fmt.Fprintf(&out, "# nothing committed: the branch is where it started\n")
	} else {
		fmt.Fprintf(&out, "# take it: git -C %s merge %s\n%s\n", w.Repo, w.Branch, work.Committed)
	}
	switch {
	case work.Worktree == "removed":
		fmt.Fprintf(&out, "# its worktree was removed; the branch holds all of its work\n")
	case work.Worktree != "":
		fmt.Fprintf(&out, "# its worktree is not looked at: %s\n", work.Worktree)
	case work.Uncommitted != "":
		fmt.Fprintf(&out, "\n# %s · NOT COMMITTED, in its worktree %s (not on the branch)\n%s\n", ref, w.Path, strings.TrimRight(work.Uncommitted, "\n"))
	default:
		fmt.Fprintf(&out, "# nothing uncommitted in its worktree %s\n", w.Path)
	}
	return out.String(), nil
}
