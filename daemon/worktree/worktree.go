// Package worktree gives a task a git worktree of its own: a checkout of
// the repository at the task's working directory, on a branch of its own
// (taskd/<list>/<id>), so that tasks on one repository do not edit the
// same files at once.
//
// Where. Worktrees live in taskd's own state directory, outside the task
// root (Place: $XDG_STATE_HOME/taskd/worktrees/<root>/<list>/<id>), never
// under ~/.claude, where Claude Code refuses every edit. Every path is
// checked with the path rule of package fsroot (plain names below the
// state directory, no link followed) before git is run on it and before
// it is removed: a link planted where a worktree is, or is to be, is
// refused with the reason, never followed.
//
// What. Create makes the worktree (or finds the one made before), Commit
// commits what an agent left in it to its branch when its task succeeds,
// respecting the repository's ignore rules, and records the diffstat;
// Diff shows a task's work, committed and not; Remove takes the worktree
// away, never the branch, committing what was left uncommitted first;
// Move brings a worktree made in an earlier place to the current one.
//
// How. Every git command taskd runs goes through Git: an environment
// reduced to the allow-list agents get (package allowenv), so no secret of
// the daemon's reaches a repository's hooks or filters; and, for taskd's
// own operations, no hooks, no fsmonitor, no filter or diff driver the
// repository's own configuration defines. docs/agents.md and
// docs/security.md describe the whole.
package worktree

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"time"
)

// Timeout bounds each git command.
const Timeout = 2 * time.Minute

// A Worktree is a task's checkout, as its task file records it
// (metadata.taskd.workspace): the repository it belongs to, where it is,
// its branch, and the directory in it the agent runs in (the task's
// working directory's place in the repository). Once the task has
// succeeded it also says what its work is: Base, the commit the branch
// started from; Commit, the branch's newest commit when the branch has
// moved from Base (absent when nothing changed); and the diffstat of
// Base..Commit.
type Worktree struct {
	Repo         string `json:"repo"`
	Path         string `json:"path"`
	Branch       string `json:"branch"`
	Dir          string `json:"dir"`
	Base         string `json:"base,omitempty"`
	Commit       string `json:"commit,omitempty"`
	FilesChanged int    `json:"filesChanged,omitempty"`
	Insertions   int    `json:"insertions,omitempty"`
	Deletions    int    `json:"deletions,omitempty"`
}

// Branch is the branch of task id of list: taskd/<list>/<id>. List and
// task ids are plain names without slashes, so no two tasks share one.
func Branch(list, id string) string { return "taskd/" + list + "/" + id }

// OldBranch is the branch an earlier taskd gave task id of list,
// taskd/<list>-<id>, which tasks made then keep.
func OldBranch(list, id string) string { return "taskd/" + list + "-" + id }

// TaskBranch reports whether branch is one taskd gives task id of list
// (Branch, or OldBranch for a task made by an earlier taskd): the only
// branches taskd checks out for it, commits to, or names in a command.
func TaskBranch(branch, list, id string) bool {
	return branch == Branch(list, id) || branch == OldBranch(list, id)
}

// ErrNoRepository is returned (wrapped) when the working directory is in
// no git repository.
var ErrNoRepository = errors.New("not in a git repository")

// A Place is where taskd makes the worktrees of one task root: below
// State, taskd's state directory (the base the path rule checks from,
// trusted as it is), in worktrees/<root>/<list>/<id>, where <root> names
// the task root (two daemons on two roots never share a worktree).
type Place struct {
	State string // taskd's state directory, such as ~/.local/state/taskd
	Root  string // the task root
}

// Dir is the directory of the root's worktrees: one directory per list.
func (p Place) Dir() string {
	return filepath.Join(p.State, "worktrees", rootKey(p.Root))
}

// Path is where task id of list gets its worktree.
func (p Place) Path(list, id string) string { return filepath.Join(p.Dir(), list, id) }

// Holds reports whether path is where the place puts task id of list's
// worktree.
func (p Place) Holds(path, list, id string) bool {
	return p.State != "" && filepath.Clean(path) == p.Path(list, id)
}

// rootKey names a task root in one path element: its path with every
// character but letters and digits made a dash (as Claude Code names a
// project's directory), its last 48 bytes, and a short hash of the whole,
// so that roots never share a key: "home-me-claude-tasks-1f2e3d4c".
func rootKey(root string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(root)))
	b := []byte(filepath.Clean(root))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	name := strings.Trim(string(b), "-")
	for strings.Contains(name, "--") {
		name = strings.ReplaceAll(name, "--", "-")
	}
	if len(name) > 48 {
		name = strings.TrimLeft(name[len(name)-48:], "-")
	}
	if name != "" {
		name += "-"
	}
	return name + hex.EncodeToString(sum[:4])
}

// StateOf returns the state directory in which a daemon of root made the
// worktree at path for task id of list: path must be in its place there,
// worktrees/<root>/<list>/<id>. It is for those who read what a task
// records without knowing the daemon's state directory (taskd diff).
func StateOf(path, root, list, id string) (string, bool) {
	rel := string(filepath.Separator) + filepath.Join("worktrees", rootKey(root), list, id)
	state, ok := strings.CutSuffix(filepath.Clean(path), rel)
	return state, ok && filepath.IsAbs(state)
}
