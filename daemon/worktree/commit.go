package worktree

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Commit commits what the agent left in the worktree w records (inside
// base) to its branch, as one commit with message, and returns w with
// what the branch then holds of the task's work: Commit, the branch's
// newest commit when the branch has moved from Base (the agent's own
// commits count too), and the diffstat of Base..Commit; none of these
// when nothing changed. What goes in is what git add -A takes: every
// change and every new file except those the repository ignores
// (.gitignore, .git/info/exclude, the user's excludes file); nothing is
// forced in. When nothing changed, nothing is committed. The commit is
// the user's when git knows who that is, else taskd's (user.name taskd).
// The worktree is verified first (verify): taskd commits only to the
// task's own branch, in the task's own worktree.
func Commit(ctx context.Context, base string, w Worktree, message string) (Worktree, error) {
	if _, err := verify(ctx, base, w); err != nil {
		return w, err
	}
	r, err := open(ctx, w.Path)
	if err != nil {
		return w, err
	}
	if err := commitAll(ctx, r, message); err != nil {
		return w, err
	}
	return record(ctx, r, w)
}

// commitAll adds everything the repository does not ignore and commits
// it with message, if anything changed.
func commitAll(ctx context.Context, r *repo, message string) error {
	if _, err := r.git(ctx, "add", "--all"); err != nil {
		return fmt.Errorf("add the work: %w", err)
	}
	_, err := r.git(ctx, "diff", "--cached", "--quiet", "--ignore-submodules=dirty", "--no-ext-diff")
	switch exitCode(err) {
	case 0:
		return nil // nothing changed
	case 1:
	default:
		return fmt.Errorf("look for changes: %w", err)
	}
	if strings.TrimSpace(message) == "" {
		message = "taskd: the work of a task"
	}
	args := []string{"commit", "--quiet", "--no-verify", "--cleanup=whitespace", "-m", message}
	_, err = r.git(ctx, args...)
	if err != nil && unknownIdentity(err) {
		_, err = r.git(ctx, append([]string{"-c", "user.name=taskd", "-c", "user.email=taskd@localhost"}, args...)...)
	}
	if err != nil {
		return fmt.Errorf("commit the work: %w", err)
	}
	return nil
}

// unknownIdentity reports whether git refused to commit because it does
// not know who the user is.
func unknownIdentity(err error) bool {
	s := err.Error()
	return strings.Contains(s, "who you are") || strings.Contains(s, "ident") || strings.Contains(s, "auto-detect email")
}

// record sets in w what its branch holds of the task's work: the newest
// commit and the diffstat of w.Base..that commit, or none of them when the
// branch is where it started. A worktree recorded without its start (made
// by an earlier taskd) counts from where the branch and the repository's
// HEAD meet.
func record(ctx context.Context, r *repo, w Worktree) (Worktree, error) {
	head, err := r.git(ctx, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return w, fmt.Errorf("read the branch's commit: %w", err)
	}
	if w.Base == "" {
		if main, err := Git(ctx, Call{Dir: w.Repo, Args: []string{"rev-parse", "--verify", "HEAD"}}); err == nil {
			w.Base, _ = r.git(ctx, "merge-base", "HEAD", main)
		}
	}
	w.Commit, w.FilesChanged, w.Insertions, w.Deletions = "", 0, 0, 0
	if head == w.Base {
		return w, nil
	}
	w.Commit = head
	if w.Base == "" {
		return w, nil
	}
	out, err := r.git(ctx, "diff", "--numstat", "-z", "--no-ext-diff", "--no-textconv", "--find-renames", w.Base, head)
	if err != nil {
		return w, fmt.Errorf("count the work's changes: %w", err)
	}
	w.FilesChanged, w.Insertions, w.Deletions = numstat(out)
	return w, nil
}

// numstat sums the output of git diff --numstat -z: files, lines added,
// lines removed (a binary file counts as a file, without lines).
func numstat(out string) (files, ins, del int) {
	tokens := strings.Split(out, "\x00")
	for i := 0; i < len(tokens); {
		parts := strings.SplitN(tokens[i], "\t", 3)
		if len(parts) < 3 {
			i++
			continue
		}
		files++
		a, _ := strconv.Atoi(parts[0])
		d, _ := strconv.Atoi(parts[1])
		ins, del = ins+a, del+d
		if parts[2] == "" {
			i += 3 // a rename: the old and the new name follow
		} else {
			i++
		}
	}
	return files, ins, del
}
