package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/worktree"
	"github.com/taskd/taskd/internal/fsroot"
)

// checkWorktrees checks where the daemon makes the tasks' git worktrees
// (in taskd's state directory, as this shell's environment places it):
// never under Claude Code's own directory (~/.claude, or
// $CLAUDE_CONFIG_DIR), where the real CLI refuses every edit, even with
// acceptEdits; and private to the user. It warns of tasks whose worktree
// an earlier taskd made under their list's .taskd, which Claude Code
// cannot edit either: each moves out when its task runs again.
func (d *doctor) checkWorktrees(root string) {
	home := d.getenv("HOME")
	if home == "" {
		home = d.home
	}
	if root == "" || home == "" {
		return
	}
	state := config.DefaultStateDir(d.getenv, home)
	dir := worktree.Place{State: state, Root: root}.Dir()
	claude := d.getenv("CLAUDE_CONFIG_DIR")
	if claude == "" {
		claude = filepath.Join(home, ".claude")
	}
	if within(dir, claude) {
		d.add(levelFail, "worktrees", d.path(dir)+" is under "+d.path(claude)+", where Claude Code refuses every edit (even with acceptEdits): a task with a worktree could not change a file",
			"give the daemon an $XDG_STATE_HOME outside "+d.path(claude)+" (unset, taskd uses ~/.local/state); see docs/agents.md#worktrees")
		return
	}
	for _, p := range []string{filepath.Join(dir), filepath.Dir(dir)} {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir():
			d.add(levelFail, "worktrees", d.path(p)+" is not a directory (a link, or a file): the daemon makes no worktree there, since it follows no link in its own directory",
				"rm "+d.path(p)+" (the daemon makes its own directory there)")
			return
		case !d.private(p, "worktrees", d.path(p)):
			return
		}
	}
	d.add(levelOK, "worktrees", "made in "+d.path(dir)+", outside "+d.path(claude), "")
	if n := d.earlierWorktrees(root); n > 0 {
		d.add(levelWarn, "worktrees", fmt.Sprintf("%d %s a worktree an earlier taskd made in its list's .taskd/worktrees, under the task root, where Claude Code cannot edit", n, plural(n, "task has", "tasks have")),
			"nothing to do: each moves to "+d.path(dir)+" when its task runs again, and goes when the task is removed ('taskd rm')")
	}
}

// earlierWorktrees counts the worktrees in the .taskd/worktrees of root's
// lists.
func (d *doctor) earlierWorktrees(root string) int {
	lists, _ := control.ListNames(root)
	n := 0
	for _, l := range lists {
		entries, _ := fsroot.ReadDirectory(area.WorktreesDir(filepath.Join(root, l)))
		n += len(entries)
	}
	return n
}

// within reports whether path is dir or inside it, links resolved where
// they exist.
func within(path, dir string) bool {
	path, dir = resolved(path), resolved(dir)
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// resolved is path with the links of its longest existing part resolved.
func resolved(path string) string {
	path = filepath.Clean(path)
	for p, rest := path, ""; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
