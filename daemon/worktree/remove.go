package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/taskd/taskd/internal/fsroot"
)

// Remove takes away the worktree w records (inside base), keeping its
// branch, and returns the branch. What was left uncommitted in it (a
// failed attempt's edits, changes made after the task ended) is first
// committed to the branch, as Commit would (ignored files are not: they
// go with the worktree), with message; then the worktree is removed and
// the repository's record of it with it. Nothing there is nothing to
// remove; an empty directory there (an addition cut short) is removed. A
// worktree that fails verify (a link at its path, a .git that leads
// elsewhere, another branch checked out) is left as it is and the refusal
// returned: taskd never follows a link there, nor commits in a repository
// or on a branch that is not the task's.
func Remove(ctx context.Context, base string, w Worktree, message string) (string, error) {
	switch err := checkPath(base, w.Path); {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err == nil && emptyDir(base, w.Path):
		return "", fsroot.Remove(base, w.Path) // an addition cut short
	}
	co, err := verify(ctx, base, w)
	if err != nil {
		return "", fmt.Errorf("remove worktree %s: %w", w.Path, err)
	}
	r, err := open(ctx, w.Path)
	if err != nil {
		return co.branch, fmt.Errorf("remove worktree %s: %w", w.Path, err)
	}
	if err := commitAll(ctx, r, message); err != nil {
		return co.branch, fmt.Errorf("remove worktree %s: keep its uncommitted work: %w", w.Path, err)
	}
	unlock := lockRepository(co.common)
	_, err = r.git(ctx, "worktree", "remove", "--force", w.Path)
	unlock()
	if err != nil {
		return co.branch, fmt.Errorf("remove worktree %s: %w", w.Path, err)
	}
	return co.branch, nil
}
