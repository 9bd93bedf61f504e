// Package worktree gives a task a git worktree of its own: a checkout of
// the repository at the task's working directory, on a branch of its own
// (taskd/<list>-<id>), in the list's .taskd/worktrees/<id>, so that tasks
// on one repository do not edit the same files at once. Remove takes the
// worktree away when its task is cleaned up, never the branch: work left
// uncommitted in it is committed to the branch first, so nothing is lost.
// It runs the git command; docs/agents.md describes the whole.
package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/taskd/taskd/internal/proc"
)

// Timeout bounds each git command.
const Timeout = 2 * time.Minute

// A Worktree is a task's checkout: the repository it belongs to, where
// it is, its branch, and the directory in it the agent runs in (the
// task's working directory's place in the repository).
type Worktree struct {
	Repo   string `json:"repo"`
	Path   string `json:"path"`
	Branch string `json:"branch"`
	Dir    string `json:"dir"`
}

// Branch is the branch of task id of list.
func Branch(list, id string) string { return "taskd/" + list + "-" + id }

// ErrNoRepository is returned (wrapped) when the working directory is in
// no git repository.
var ErrNoRepository = errors.New("not in a git repository")

// Create makes the worktree at path on branch from the repository that
// holds dir, or finds the one made before. A new branch starts at base
// (a branch or commit; empty: the repository's HEAD); a branch that
// exists already (its worktree was removed) is checked out as it is.
// The parent directory of path must exist.
func Create(ctx context.Context, dir, path, branch, base string) (Worktree, error) {
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel", "--path-format=absolute", "--git-common-dir")
	top, common, _ := strings.Cut(out, "\n")
	if err != nil || common == "" {
		return Worktree{}, fmt.Errorf("%w at %s: %v", ErrNoRepository, dir, err)
	}
	rel, err := filepath.Rel(evalDir(top), evalDir(dir))
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = "."
	}
	w := Worktree{Repo: top, Path: path, Branch: branch, Dir: filepath.Join(path, rel)}
	if _, err := os.Lstat(path); err == nil {
		head, err := git(ctx, path, "rev-parse", "--abbrev-ref", "HEAD")
		if err != nil || head != branch {
			return w, fmt.Errorf("%s is there but is not the worktree of branch %s (it is on %q); remove it", path, branch, head)
		}
		return w, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return w, err
	}
	args := []string{"worktree", "add", "--quiet"}
	if _, err := git(ctx, top, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		args = append(args, path, branch)
	} else {
		args = append(args, "-b", branch, path)
		if base != "" {
			args = append(args, base)
		}
	}
	unlock := lockRepository(common)
	defer unlock()
	if _, err := git(ctx, top, args...); err != nil {
		return w, fmt.Errorf("create the worktree of branch %s: %v", branch, err)
	}
	return w, nil
}

// repositories holds a lock for each repository (by its common git
// directory) whose worktrees are being added or removed: git does not
// lock its list of worktrees, and one `git worktree add` reading it
// while another writes it fails ("failed to read .git/worktrees/…").
var repositories sync.Map // common dir → *sync.Mutex

// lockRepository locks the repository whose common git directory is
// common for adding or removing a worktree, and returns the unlock.
func lockRepository(common string) func() {
	mu, _ := repositories.LoadOrStore(filepath.Clean(common), new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}

// Remove takes away the worktree at path, keeping its branch: changes
// left in it are first committed to the branch (message names what),
// then the worktree is removed and the repository's record of it pruned.
// A path that does not exist is nothing to remove.
func Remove(ctx context.Context, path, message string) error {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	common, err := git(ctx, path, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return fmt.Errorf("remove worktree %s: not a worktree: %v", path, err)
	}
	if changes, err := git(ctx, path, "status", "--porcelain"); err == nil && changes != "" {
		if _, err := git(ctx, path, "add", "-A"); err != nil {
			return fmt.Errorf("remove worktree %s: keep its changes: %v", path, err)
		}
		if _, err := commit(ctx, path, message); err != nil {
			return fmt.Errorf("remove worktree %s: commit its changes: %v", path, err)
		}
	}
	unlock := lockRepository(common)
	defer unlock()
	if _, err := git(ctx, filepath.Dir(common), "--git-dir="+common, "worktree", "remove", "--force", path); err != nil {
		return fmt.Errorf("remove worktree %s: %v", path, err)
	}
	return nil
}

// commit commits what is staged in dir, as the user if git knows who
// that is, else as taskd.
func commit(ctx context.Context, dir, message string) (string, error) {
	out, err := git(ctx, dir, "commit", "--quiet", "--no-verify", "-m", message)
	if err == nil {
		return out, nil
	}
	return git(ctx, dir, "-c", "user.name=taskd", "-c", "user.email=taskd@localhost", "commit", "--quiet", "--no-verify", "-m", message)
}

// git runs git in dir and returns its output, trimmed; an error carries
// what git said.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = gitEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := proc.Run(cmd); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return strings.TrimSpace(stdout.String()), errors.New(msg)
		}
		return strings.TrimSpace(stdout.String()), err
	}
	return strings.TrimSpace(stdout.String()), nil
}

// gitEnv is the daemon's environment without the variables that would
// point git elsewhere than the directory it is given.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0")
}

// evalDir is dir with its links resolved, for comparing paths.
func evalDir(dir string) string {
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		return d
	}
	return dir
}
