package main

import (
	"context"
	"io"
	"os"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/status"
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
	if _, err := ref.dir(); err != nil {
		return err
	}
	text, err := status.Diff(ctx, ref.root, ref.list, ref.id, *stat)
	if err != nil {
		return err
	}
	_, err = io.WriteString(inv.stdout, text)
	return err
}
