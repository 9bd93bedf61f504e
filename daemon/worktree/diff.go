package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Work is a task's work as Diff finds it.
type Work struct {
	// Range is what Committed compares: base..branch.
	Range string
	// Committed is the diff (or diffstat) of what the task's branch holds
	// since it started.
	Committed string
	// Uncommitted is the diff (or diffstat) of what is in the worktree and
	// not on the branch, as a commit would take it (ignored files left
	// out): a failed attempt's edits, say. Empty when there is none.
	Uncommitted string
	// Worktree says why the worktree was not looked at: "" when it was,
	// else that it is gone, or why it is refused.
	Worktree string
}

// Diff returns task's work as w records it: what its branch holds
// (Base..branch, read from the repository, so it is there after the
// worktree is removed), and what its worktree (inside base, checked as
// verify does) holds that is not committed. stat asks for diffstats
// instead of patches. Nothing is changed: the uncommitted work is
// compared through an index of Diff's own.
func Diff(ctx context.Context, base string, w Worktree, stat bool) (Work, error) {
	var work Work
	r, err := open(ctx, w.Repo)
	if err != nil {
		return work, err
	}
	ref := "refs/heads/" + w.Branch
	tip, err := r.git(ctx, "rev-parse", "--verify", "--quiet", ref)
	if err != nil {
		return work, fmt.Errorf("branch %s is not in %s", w.Branch, w.Repo)
	}
	from := w.Base
	if from == "" {
		if from, err = r.git(ctx, "merge-base", ref, "HEAD"); err != nil {
			return work, fmt.Errorf("where branch %s starts is not recorded, and it shares no commit with %s's HEAD", w.Branch, w.Repo)
		}
	}
	work.Range = short(from) + ".." + short(tip)
	if work.Committed, err = r.git(ctx, diffArgs(stat, from, tip)...); err != nil {
		return work, fmt.Errorf("compare %s: %w", work.Range, err)
	}
	switch err := checkPath(base, w.Path); {
	case errors.Is(err, fs.ErrNotExist):
		work.Worktree = "removed"
		return work, nil
	case err != nil:
		work.Worktree = err.Error()
		return work, nil
	}
	if _, err := verify(ctx, base, w); err != nil {
		work.Worktree = err.Error()
		return work, nil
	}
	work.Uncommitted, err = uncommitted(ctx, w.Path, stat)
	return work, err
}

// uncommitted is the diff of what the worktree at path holds against its
// HEAD, new files included and ignored ones left out, made in an index of
// its own: the worktree's own index is not touched.
func uncommitted(ctx context.Context, path string, stat bool) (string, error) {
	tmp, err := os.MkdirTemp("", "taskd-diff-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	r, err := open(ctx, path)
	if err != nil {
		return "", err
	}
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if _, err := r.gitEnv(ctx, index, "read-tree", "HEAD"); err != nil {
		return "", fmt.Errorf("read the worktree's commit: %w", err)
	}
	if _, err := r.gitEnv(ctx, index, "add", "--all"); err != nil {
		return "", fmt.Errorf("look at the worktree's files: %w", err)
	}
	out, err := r.gitEnv(ctx, index, append(diffArgs(stat, "--cached"), "HEAD")...)
	if err != nil {
		return "", fmt.Errorf("compare the worktree with its commit: %w", err)
	}
	return out, nil
}

// diffArgs is git diff with no driver of the repository's run, no color,
// a patch or a diffstat, and then args.
func diffArgs(stat bool, args ...string) []string {
	out := []string{"diff", "--no-ext-diff", "--no-textconv", "--no-color", "--find-renames"}
	if stat {
		out = append(out, "--stat")
	}
	return append(out, args...)
}

// short is a commit's name, abbreviated.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
