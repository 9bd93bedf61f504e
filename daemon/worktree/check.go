package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/taskd/taskd/internal/fsroot"
)

// checkPath applies the path rule to path, where a worktree is or is to
// be made, inside base: plain names below base, no link followed on the
// way or at path. It returns nil for a directory, an error satisfying
// errors.Is(err, fs.ErrNotExist) when nothing is there, and an
// *fsroot.UnsafeError (wrapping fsroot.ErrLink) for a link, or for
// something else than a directory.
func checkPath(base, path string) error {
	fd, err := fsroot.OpenDirFD(base, path, false)
	if err == nil {
		syscall.Close(fd)
		return nil
	}
	var pe *fs.PathError
	at := path
	if errors.As(err, &pe) {
		at = pe.Path
	}
	switch {
	case errors.Is(err, fsroot.ErrLink):
		to, _ := os.Readlink(at)
		return &fsroot.UnsafeError{Path: at, Kind: fsroot.ErrLink,
			Problem: fmt.Sprintf("a symbolic link (to %s)", to),
			Why:     "taskd makes each task's git worktree itself, in a directory of its own, and follows no link there: git and the agent would work wherever the link points",
			Fix:     "rm " + at + " (taskd makes the worktree again)"}
	case errors.Is(err, syscall.ENOTDIR):
		return &fsroot.UnsafeError{Path: at, Kind: fsroot.ErrLink, Problem: "not a directory",
			Why: "taskd makes each task's git worktree there itself",
			Fix: "rm " + at + " (taskd makes the worktree again)"}
	}
	return err
}

// A checkout is what git says of a worktree taskd verified.
type checkout struct {
	common string // the repository's git directory (its common dir)
	branch string // the branch checked out, refs/heads/ taken off
}

// verify checks that the worktree w records is one taskd made and may
// run git in: its path passes the path rule inside base; git finds there
// a linked worktree whose top is that path, which its repository lists
// at that path; that repository is w.Repo's (when w names one); and the
// branch checked out is w.Branch (or any taskd/ branch when w names
// none). Anything else (a .git file pointing elsewhere, another branch
// checked out) is refused: taskd commits to a task's branch only.
func verify(ctx context.Context, base string, w Worktree) (checkout, error) {
	if err := checkPath(base, w.Path); err != nil {
		return checkout{}, err
	}
	out, err := Git(ctx, Call{Dir: w.Path, Args: []string{"rev-parse", "--path-format=absolute",
		"--show-toplevel", "--absolute-git-dir", "--git-common-dir", "--symbolic-full-name", "HEAD"}})
	lines := strings.Split(out, "\n")
	if err != nil || len(lines) != 4 {
		return checkout{}, fmt.Errorf("%s is not a git worktree: %v", w.Path, err)
	}
	top, gitDir, common, head := lines[0], lines[1], lines[2], lines[3]
	real := evalDir(w.Path)
	if evalDir(top) != real {
		return checkout{}, fmt.Errorf("%s is not a git worktree of its own (git works in %s there)", w.Path, top)
	}
	if filepath.Dir(gitDir) != filepath.Join(common, "worktrees") {
		return checkout{}, fmt.Errorf("%s is not a linked worktree of a repository (its git directory is %s)", w.Path, gitDir)
	}
	// The list is read under the repository's lock: a worktree being
	// added beside this one makes git worktree list fail meanwhile.
	unlock := lockRepository(common)
	listed, err := Git(ctx, Call{Dir: w.Path, Args: []string{"worktree", "list", "--porcelain", "-z"}})
	unlock()
	if err != nil || !listsWorktree(listed, real, head) {
		return checkout{}, fmt.Errorf("%s is not a worktree its repository %s knows there", w.Path, filepath.Dir(common))
	}
	if w.Repo != "" {
		rc, err := Git(ctx, Call{Dir: w.Repo, Args: []string{"rev-parse", "--path-format=absolute", "--git-common-dir"}})
		if err != nil || evalDir(rc) != evalDir(common) {
			return checkout{}, fmt.Errorf("%s is not a worktree of %s", w.Path, w.Repo)
		}
	}
	branch, ok := strings.CutPrefix(head, "refs/heads/")
	switch {
	case !ok:
		return checkout{}, fmt.Errorf("the worktree %s is not on a branch (HEAD is %s); check out %s there", w.Path, head, orTaskBranch(w.Branch))
	case w.Branch != "" && branch != w.Branch, w.Branch == "" && !strings.HasPrefix(branch, "taskd/"):
		return checkout{}, fmt.Errorf("the worktree %s is on branch %s, not %s; check out %s there", w.Path, branch, orTaskBranch(w.Branch), orTaskBranch(w.Branch))
	}
	return checkout{common: common, branch: branch}, nil
}

func orTaskBranch(b string) string {
	if b == "" {
		return "its task's branch"
	}
	return b
}

// listsWorktree reports whether the output of git worktree list
// --porcelain -z lists a worktree at path with HEAD head (a ref, or
// "HEAD" when detached).
func listsWorktree(out, path, head string) bool {
	for _, entry := range strings.Split(out, "\x00\x00") {
		var at, ref string
		for _, line := range strings.Split(entry, "\x00") {
			if p, ok := strings.CutPrefix(line, "worktree "); ok {
				at = p
			} else if b, ok := strings.CutPrefix(line, "branch "); ok {
				ref = b
			} else if line == "detached" {
				ref = "HEAD"
			}
		}
		if at != "" && evalDir(at) == path {
			return ref == head
		}
	}
	return false
}

// evalDir is dir with its links resolved, for comparing paths.
func evalDir(dir string) string {
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		return d
	}
	return filepath.Clean(dir)
}
