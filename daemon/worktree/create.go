package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/internal/fsroot"
)

// A Spec says which worktree Create makes: at Path (inside base, by the
// path rule), on Branch, from the repository that holds Dir. A new branch
// starts at From (a branch; empty: the repository's HEAD).
type Spec struct {
	Dir, Path, Branch, From string
}

// Create makes the worktree s names, or finds the one made there before.
// The worktree returned records where a new branch starts (Base); a
// branch that exists already (its worktree was removed) is checked out as
// it is, and Base is left for the caller to keep. The directories up to
// s.Path's are made as the path rule makes them (0700); a link on the
// way, or at s.Path, is refused, never followed.
func Create(ctx context.Context, base string, s Spec) (Worktree, error) {
	dir, path, branch, from := s.Dir, s.Path, s.Branch, s.From
	out, err := Git(ctx, Call{Dir: dir, Args: []string{"rev-parse", "--show-toplevel", "--path-format=absolute", "--git-common-dir"}})
	top, common, _ := strings.Cut(out, "\n")
	if err != nil || common == "" {
		return Worktree{}, fmt.Errorf("%w at %s: %v", ErrNoRepository, dir, err)
	}
	rel, err := filepath.Rel(evalDir(top), evalDir(dir))
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = "."
	}
	w := Worktree{Repo: top, Path: path, Branch: branch, Dir: filepath.Join(path, rel)}
	if strings.HasPrefix(branch, "-") || strings.HasPrefix(from, "-") {
		return w, fmt.Errorf("branch %q or start %q is not a branch name", branch, from)
	}
	switch err := checkPath(base, path); {
	case err == nil && !emptyDir(base, path):
		// Made before: it must be the worktree of this branch.
		_, err := verify(ctx, base, w)
		return w, err
	case err == nil:
		// An empty directory (an addition cut short): git adds there.
	case !errors.Is(err, fs.ErrNotExist):
		return w, err
	}
	if err := makeDir(base, filepath.Dir(path)); err != nil {
		return w, err
	}
	r, err := open(ctx, top)
	if err != nil {
		return w, err
	}
	unlock := lockRepository(common)
	made, err := add(ctx, r, path, branch, from)
	unlock()
	if err != nil {
		return w, fmt.Errorf("create the worktree of branch %s: %w", branch, err)
	}
	if _, err := verify(ctx, base, w); err != nil {
		return w, err
	}
	if made {
		if w.Base, err = Git(ctx, Call{Dir: path, Args: []string{"rev-parse", "--verify", "HEAD"}}); err != nil {
			return w, fmt.Errorf("read where branch %s starts: %w", branch, err)
		}
	}
	return w, nil
}

// add adds the worktree at path to repository r: on branch as it is if
// it exists, else on a new branch from from (HEAD when empty), which made
// reports. A branch whose worktree's directory was removed by hand (git
// still counts it as checked out there, and only there) is checked out
// again.
func add(ctx context.Context, r *repo, path, branch, from string) (made bool, err error) {
	if _, err := r.git(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		_, err = r.git(ctx, "worktree", "add", "--quiet", path, branch)
		if err != nil && registeredMissing(ctx, r, path, branch) {
			_, err = r.git(ctx, "worktree", "add", "--quiet", "--force", path, branch)
		}
		return false, err
	}
	args := []string{"worktree", "add", "--quiet", "-b", branch, path}
	if from != "" {
		args = append(args, from)
	}
	_, err = r.git(ctx, args...)
	return true, err
}

// Move moves the worktree w records from where it is (inside fromBase)
// to path (inside base), with what is in it, uncommitted work included;
// the repository's record of it follows (git worktree move). It returns
// the worktree as it is then. Both places are checked with the path rule.
func Move(ctx context.Context, fromBase string, w Worktree, base, path string) (Worktree, error) {
	co, err := verify(ctx, fromBase, w)
	if err != nil {
		return w, err
	}
	switch err := checkPath(base, path); {
	case err == nil:
		return w, fmt.Errorf("move the worktree %s to %s: something is there already", w.Path, path)
	case !errors.Is(err, fs.ErrNotExist):
		return w, err
	}
	if err := makeDir(base, filepath.Dir(path)); err != nil {
		return w, err
	}
	r, err := open(ctx, w.Path)
	if err != nil {
		return w, err
	}
	unlock := lockRepository(co.common)
	_, err = r.git(ctx, "worktree", "move", w.Path, path)
	unlock()
	if err != nil {
		return w, fmt.Errorf("move the worktree %s to %s: %w", w.Path, path, err)
	}
	moved := w
	moved.Path = path
	if rel, err := filepath.Rel(w.Path, w.Dir); err == nil && !strings.HasPrefix(rel, "..") {
		moved.Dir = filepath.Join(path, rel)
	} else {
		moved.Dir = path
	}
	if _, err := verify(ctx, base, moved); err != nil {
		return moved, err
	}
	return moved, nil
}

// makeDir makes base, taskd's own directory, if it is missing (0700),
// and dir inside it by the path rule.
func makeDir(base, dir string) error {
	if err := os.MkdirAll(base, 0o700); err != nil {
		return fmt.Errorf("make taskd's directory: %w", err)
	}
	if err := fsroot.MkdirAll(base, dir); err != nil {
		return fmt.Errorf("make the worktree's directory: %w", err)
	}
	return nil
}

// emptyDir reports whether the directory at path (inside base) is empty.
func emptyDir(base, path string) bool {
	entries, err := fsroot.ReadDir(base, path)
	return err == nil && len(entries) == 0
}

// registeredMissing reports whether the repository r is of still lists a
// worktree at path, whose directory is gone, as the only checkout of
// branch: what is left when a worktree's directory is removed by hand.
func registeredMissing(ctx context.Context, r *repo, path, branch string) bool {
	out, err := r.git(ctx, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return false
	}
	want := filepath.Join(evalDir(filepath.Dir(path)), filepath.Base(path))
	found := false
	for _, entry := range strings.Split(out, "\x00\x00") {
		var at, ref string
		for _, line := range strings.Split(entry, "\x00") {
			if p, ok := strings.CutPrefix(line, "worktree "); ok {
				at = p
			} else if b, ok := strings.CutPrefix(line, "branch "); ok {
				ref = b
			}
		}
		switch {
		case at == want:
			_, err := os.Lstat(at)
			found = errors.Is(err, fs.ErrNotExist)
		case ref == "refs/heads/"+branch:
			return false // checked out elsewhere: not taskd's to override
		}
	}
	return found
}
