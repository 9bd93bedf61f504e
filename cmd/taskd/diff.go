package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/worktree"
)

func init() {
	register(&command{
		name:  "diff",
		usage: "[--root DIR] [--stat] LIST/ID",
		short: "show the work of a task that runs in a git worktree",
		group: "Tasks",
		long: `
Diff shows the work of a task that runs in a git worktree of its own
(metadata.taskd.worktree, taskd submit --worktree): first what its branch
taskd/<list>/<id> holds since it started — the commits taskd made when
the task succeeded, and any the agent made — read from the repository,
so it is there after the worktree is removed; then, marked apart, what its
worktree holds that is not committed (the edits of an attempt that
failed, kept there for a retry), new files included and files the
repository ignores left out. Each part starts with a line beginning with
'#' that says what it is. --stat prints diffstats instead of patches.

Diff changes nothing, and runs none of the repository's hooks, filters or
diff drivers. To take the work, from the repository:

	git merge taskd/l/7            (or git cherry-pick, git rebase)
	git diff main...taskd/l/7      (what the branch adds to main)

Diff fails (status 1) for a task that does not exist or has no worktree,
and when the branch is not in the repository.
`,
		run: runDiff,
	})
}

func runDiff(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	stat := fs.Bool("stat", false, "print diffstats instead of patches")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return inv.usageErrorf("name one task")
	}
	r, err := daemon.ResolveRoot(*root, os.Getenv)
	if err != nil {
		return err
	}
	ref, err := parseTaskRef(r, fs.Arg(0))
	if err != nil {
		return err
	}
	dir, err := ref.dir()
	if err != nil {
		return err
	}
	t, err := dir.Read(ref.id)
	if err != nil {
		return fmt.Errorf("task %s: %w", ref, err)
	}
	w, ok := job.WorkspaceOf(t)
	if !ok {
		return fmt.Errorf("task %s has no git worktree (it runs in one with metadata.taskd.worktree: true, or taskd submit --worktree)", ref)
	}
	base, ok := worktree.StateOf(w.Path, r, ref.list, ref.id)
	if !ok && filepath.Clean(w.Path) == area.WorktreeDir(dir.Path(), ref.id) {
		base, ok = dir.Path(), true // made by an earlier taskd
	}
	if !ok || !worktree.TaskBranch(w.Branch, ref.list, ref.id) {
		return fmt.Errorf("task %s records the worktree %s on branch %s, which is not one taskd made for it", ref, w.Path, w.Branch)
	}
	work, err := worktree.Diff(ctx, base, w, *stat)
	if err != nil {
		return fmt.Errorf("task %s: %w", ref, err)
	}
	out := inv.stdout
	fmt.Fprintf(out, "# %s · branch %s of %s · committed %s\n", ref, w.Branch, w.Repo, work.Range)
	if work.Committed == "" {
		fmt.Fprintf(out, "# nothing committed: the branch is where it started\n")
	} else {
		fmt.Fprintf(out, "# take it: git -C %s merge %s\n%s\n", w.Repo, w.Branch, work.Committed)
	}
	switch {
	case work.Worktree == "removed":
		fmt.Fprintf(out, "# its worktree was removed; the branch holds all of its work\n")
	case work.Worktree != "":
		fmt.Fprintf(out, "# its worktree is not looked at: %s\n", work.Worktree)
	case work.Uncommitted != "":
		fmt.Fprintf(out, "\n# %s · NOT COMMITTED, in its worktree %s (not on the branch)\n%s\n", ref, w.Path, strings.TrimRight(work.Uncommitted, "\n"))
	default:
		fmt.Fprintf(out, "# nothing uncommitted in its worktree %s\n", w.Path)
	}
	return nil
}
