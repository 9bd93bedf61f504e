package worktree

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/internal/fsroot"
)

// newRepo makes a git repository with one commit (file.txt, sub/keep,
// and a .gitignore that ignores __pycache__/ and *.log) in a new
// directory, or skips the test without git.
func newRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "file.txt"), "one\n")
	write(t, filepath.Join(dir, "sub", "keep"), "")
	write(t, filepath.Join(dir, ".gitignore"), "__pycache__/\n*.log\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first"}} {
		run(t, dir, args...)
	}
	return dir
}

// run runs git as a person would, in dir, and returns its output.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, _ := os.ReadFile(path)
	return string(data)
}

// TestCreateAndRemove: two tasks' worktrees of one repository, each on
// its branch, from the task's directory inside the repository, recording
// where their branches start; made again, the same worktree is found;
// removed, a worktree's uncommitted work (not what the repository
// ignores) is committed to its branch, which stays; made again after,
// the branch is checked out as it is.
func TestCreateAndRemove(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	state := t.TempDir()
	p := Place{State: state, Root: "/home/me/.claude/tasks"}
	start := run(t, r, "rev-parse", "HEAD")
	a, err := Create(t.Context(), state, Spec{Dir: filepath.Join(r, "sub"), Path: p.Path("l", "1"), Branch: Branch("l", "1")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Create(t.Context(), state, Spec{Dir: r, Path: p.Path("l", "2"), Branch: Branch("l", "2")})
	if err != nil {
		t.Fatal(err)
	}
	if a.Dir != filepath.Join(p.Path("l", "1"), "sub") || b.Dir != p.Path("l", "2") || a.Branch != "taskd/l/1" || a.Base != start || a.Repo != r {
		t.Errorf("worktrees %+v and %+v", a, b)
	}
	for _, dir := range []string{filepath.Join(state, "worktrees"), p.Dir(), filepath.Join(p.Dir(), "l")} {
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a private directory", dir, fi.Mode().Perm(), err)
		}
	}
	again, err := Create(t.Context(), state, Spec{Dir: filepath.Join(r, "sub"), Path: a.Path, Branch: a.Branch})
	again.Base = a.Base
	if err != nil || again != a {
		t.Errorf("made again: %+v, %v; want %+v", again, err, a)
	}
	write(t, filepath.Join(a.Path, "file.txt"), "changed by 1\n")
	write(t, filepath.Join(a.Path, "new.txt"), "new\n")
	write(t, filepath.Join(a.Path, "__pycache__", "x.pyc"), "compiled\n")
	branch, err := Remove(t.Context(), state, a, "taskd: work left by task l/1")
	if err != nil || branch != "taskd/l/1" {
		t.Fatalf("Remove: %q, %v", branch, err)
	}
	if _, err := os.Lstat(a.Path); !os.IsNotExist(err) {
		t.Errorf("the worktree is still there: %v", err)
	}
	if got := run(t, r, "show", "taskd/l/1:file.txt"); got != "changed by 1" {
		t.Errorf("the branch has file.txt %q, want the worktree's change", got)
	}
	if files := run(t, r, "ls-tree", "-r", "--name-only", "taskd/l/1"); strings.Contains(files, "__pycache__") || !strings.Contains(files, "new.txt") {
		t.Errorf("the branch holds %q: want new.txt, and nothing the repository ignores", files)
	}
	if msg := run(t, r, "log", "-1", "--format=%s", "taskd/l/1"); msg != "taskd: work left by task l/1" {
		t.Errorf("the branch's last commit is %q", msg)
	}
	if got := read(t, filepath.Join(r, "file.txt")); got != "one\n" {
		t.Errorf("the repository's own checkout changed: %q", got)
	}
	if list := run(t, r, "worktree", "list"); strings.Contains(list, a.Path) || !strings.Contains(list, b.Path) {
		t.Errorf("git worktree list:\n%s", list)
	}
	c, err := Create(t.Context(), state, Spec{Dir: r, Path: a.Path, Branch: a.Branch})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(c.Path, "new.txt")); got != "new\n" || c.Base != "" {
		t.Errorf("made again from its branch: new.txt %q, base %q; want the branch's work, and no start of its own", got, c.Base)
	}
	if _, err := Remove(t.Context(), state, Worktree{Path: p.Path("l", "9")}, "x"); err != nil {
		t.Errorf("Remove of nothing: %v", err)
	}
}

func TestCreate_NoRepository(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	state := t.TempDir()
	_, err := Create(t.Context(), state, Spec{Dir: t.TempDir(), Path: filepath.Join(state, "worktrees", "k", "l", "1"), Branch: "taskd/l/1"})
	if !errors.Is(err, ErrNoRepository) {
		t.Errorf("Create outside a repository: %v, want ErrNoRepository", err)
	}
}

// TestCommit: a task's work is committed to its branch with the message
// given (a line starting with # kept), new files in and ignored ones out,
// the commit is taskd's when git knows no user, and the worktree records
// the commit and the diffstat since the branch started; nothing changed,
// nothing is committed and the record says no commit; a second commit
// counts from the same start.
func TestCommit(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	state := t.TempDir()
	w, err := Create(t.Context(), state, Spec{Dir: r, Path: filepath.Join(state, "worktrees", "k", "l", "1"), Branch: Branch("l", "1")})
	if err != nil {
		t.Fatal(err)
	}
	same, err := Commit(t.Context(), state, w, "nothing")
	if err != nil || same.Commit != "" || same.FilesChanged != 0 || run(t, r, "rev-parse", "taskd/l/1") != w.Base {
		t.Errorf("nothing changed: %+v, %v; want no commit", same, err)
	}
	write(t, filepath.Join(w.Path, "file.txt"), "one\ntwo\nthree\n")
	write(t, filepath.Join(w.Path, "new.txt"), "a\nb\n")
	write(t, filepath.Join(w.Path, "__pycache__", "x.pyc"), "compiled\n")
	write(t, filepath.Join(w.Path, "run.log"), "log\n")
	os.Remove(filepath.Join(w.Path, "sub", "keep"))
	msg := "Fix the parser\n\n# Summary\nfixed it"
	got, err := Commit(t.Context(), state, w, msg)
	if err != nil {
		t.Fatal(err)
	}
	head := run(t, r, "rev-parse", "taskd/l/1")
	if got.Commit != head || got.Base != w.Base || got.FilesChanged != 3 || got.Insertions != 4 || got.Deletions != 0 {
		t.Errorf("after a commit: %+v; want commit %s, base %s, 3 files, +4 -0", got, head, w.Base)
	}
	if body := run(t, r, "log", "-1", "--format=%B", "taskd/l/1"); body != msg {
		t.Errorf("commit message %q, want %q", body, msg)
	}
	if files := run(t, r, "ls-tree", "-r", "--name-only", "taskd/l/1"); strings.Contains(files, "__pycache__") || strings.Contains(files, "run.log") || !strings.Contains(files, "new.txt") {
		t.Errorf("the branch holds:\n%s\nwant new.txt and nothing ignored", files)
	}
	if left := run(t, w.Path, "status", "--porcelain", "--ignored"); !strings.Contains(left, "__pycache__") || strings.Contains(left, "new.txt") {
		t.Errorf("the worktree after the commit:\n%s\nwant the ignored files kept in it, the rest committed", left)
	}
	write(t, filepath.Join(w.Path, "new.txt"), "a\n")
	again, err := Commit(t.Context(), state, got, "again")
	if err != nil || again.Base != w.Base || again.FilesChanged != 3 || again.Insertions != 3 || again.Deletions != 0 {
		t.Errorf("a second commit: %+v, %v; want counted from the same start: 3 files, +3 -0", again, err)
	}
	if n := run(t, r, "rev-list", "--count", w.Base+"..taskd/l/1"); n != "2" {
		t.Errorf("%s commits on the branch, want 2", n)
	}
}

// TestBranch_NoCollisions: list a with task b-1 and list a-b with task 1
// get branches of their own, in one repository.
func TestBranch_NoCollisions(t *testing.T) {
	t.Parallel()
	if Branch("a", "b-1") == Branch("a-b", "1") {
		t.Fatalf("Branch(a, b-1) = Branch(a-b, 1) = %s", Branch("a", "b-1"))
	}
	r := newRepo(t)
	state := t.TempDir()
	p := Place{State: state, Root: "/r"}
	x, err := Create(t.Context(), state, Spec{Dir: r, Path: p.Path("a", "b-1"), Branch: Branch("a", "b-1")})
	if err != nil {
		t.Fatal(err)
	}
	y, err := Create(t.Context(), state, Spec{Dir: r, Path: p.Path("a-b", "1"), Branch: Branch("a-b", "1")})
	if err != nil {
		t.Fatal(err)
	}
	if x.Path == y.Path || x.Branch == y.Branch {
		t.Errorf("two tasks share a worktree or a branch: %+v, %+v", x, y)
	}
	if got := run(t, r, "branch", "--list", "taskd/*", "--format=%(refname:short)"); got != "taskd/a-b/1\ntaskd/a/b-1" {
		t.Errorf("branches:\n%s", got)
	}
	if !TaskBranch("taskd/a/b-1", "a", "b-1") || !TaskBranch("taskd/a-b-1", "a", "b-1") || TaskBranch("taskd/a-b/1", "a", "b-1") || TaskBranch("main", "a", "b-1") {
		t.Error("TaskBranch accepts another task's branch, or refuses the task's")
	}
}

func TestPlace(t *testing.T) {
	t.Parallel()
	a := Place{State: "/s", Root: "/home/me/.claude/tasks"}
	b := Place{State: "/s", Root: "/home/me/.claude-tasks"}
	if a.Dir() == b.Dir() {
		t.Errorf("two roots share %s", a.Dir())
	}
	if !strings.HasPrefix(a.Dir(), "/s/worktrees/home-me-claude-tasks-") {
		t.Errorf("Dir() = %s", a.Dir())
	}
	if got := a.Path("l", "7"); got != filepath.Join(a.Dir(), "l", "7") || !a.Holds(got, "l", "7") || a.Holds(got, "l", "8") {
		t.Errorf("Path(l, 7) = %s", got)
	}
	long := Place{State: "/s", Root: "/" + strings.Repeat("x/", 300)}
	if key := filepath.Base(long.Dir()); len(key) > 64 {
		t.Errorf("a long root's key is %d bytes: %s", len(key), key)
	}
}

// TestMove: a worktree made in an earlier place moves, uncommitted work
// and all, to the new place; its branch stays.
func TestMove(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	old, state := t.TempDir(), t.TempDir()
	w, err := Create(t.Context(), old, Spec{Dir: filepath.Join(r, "sub"), Path: filepath.Join(old, ".taskd", "worktrees", "1"), Branch: OldBranch("l", "1")})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.Path, "wip.txt"), "half done\n")
	to := Place{State: state, Root: "/r"}.Path("l", "1")
	moved, err := Move(t.Context(), old, w, state, to)
	if err != nil {
		t.Fatal(err)
	}
	if moved.Path != to || moved.Dir != filepath.Join(to, "sub") || moved.Branch != "taskd/l-1" {
		t.Errorf("moved: %+v", moved)
	}
	if got := read(t, filepath.Join(to, "wip.txt")); got != "half done\n" {
		t.Errorf("the uncommitted work did not move: %q", got)
	}
	if _, err := os.Lstat(w.Path); !os.IsNotExist(err) {
		t.Errorf("the old place is still there: %v", err)
	}
	if list := run(t, r, "worktree", "list"); !strings.Contains(list, to) {
		t.Errorf("git worktree list:\n%s", list)
	}
}

// TestDiff: the committed work (from the repository) and the uncommitted
// (new files in, ignored out), each apart; the worktree's own index is
// not touched; once the worktree is removed, the committed work is still
// shown.
func TestDiff(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	state := t.TempDir()
	w, err := Create(t.Context(), state, Spec{Dir: r, Path: filepath.Join(state, "worktrees", "k", "l", "1"), Branch: Branch("l", "1")})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.Path, "file.txt"), "one\nCOMMITTED\n")
	if w, err = Commit(t.Context(), state, w, "the work"); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.Path, "wip.txt"), "UNCOMMITTED\n")
	write(t, filepath.Join(w.Path, "x.log"), "IGNORED\n")
	indexBefore := run(t, w.Path, "ls-files", "--stage")
	work, err := Diff(t.Context(), state, w, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(work.Committed, "+COMMITTED") || strings.Contains(work.Committed, "UNCOMMITTED") || work.Range != w.Base[:12]+".."+w.Commit[:12] {
		t.Errorf("committed (%s):\n%s", work.Range, work.Committed)
	}
	if !strings.Contains(work.Uncommitted, "+UNCOMMITTED") || strings.Contains(work.Uncommitted, "IGNORED") || strings.Contains(work.Uncommitted, "+COMMITTED") || work.Worktree != "" {
		t.Errorf("uncommitted (%s):\n%s", work.Worktree, work.Uncommitted)
	}
	if after := run(t, w.Path, "ls-files", "--stage"); after != indexBefore {
		t.Errorf("Diff changed the worktree's index:\n%s\nwas\n%s", after, indexBefore)
	}
	stat, err := Diff(t.Context(), state, w, true)
	if err != nil || !strings.Contains(stat.Committed, "file.txt | 1 +") || !strings.Contains(stat.Uncommitted, "wip.txt | 1 +") {
		t.Errorf("--stat: %+v, %v", stat, err)
	}
	if _, err := Remove(t.Context(), state, w, "left"); err != nil {
		t.Fatal(err)
	}
	w.Commit = ""
	gone, err := Diff(t.Context(), state, w, false)
	if err != nil || !strings.Contains(gone.Committed, "+UNCOMMITTED") || gone.Worktree != "removed" || gone.Uncommitted != "" {
		t.Errorf("after removal: %+v, %v; want the branch's work, the worktree said removed", gone, err)
	}
}

// TestNumstat reads renames and binary files.
func TestNumstat(t *testing.T) {
	t.Parallel()
	out := "3\t1\ta.go\x00-\t-\timg.png\x000\t0\t\x00old name\x00new name\x00"
	if f, i, d := numstat(out); f != 3 || i != 3 || d != 1 {
		t.Errorf("numstat = %d files +%d -%d, want 3 +3 -1", f, i, d)
	}
}

// TestLinkRefused: a link planted where a worktree is to be made, or on
// the way there, is refused, naming it; nothing is written where it
// points. Swapped in for a worktree after it was made, the commit and the
// removal refuse it too: nothing is committed in the repository it points
// to, and the link stays.
func TestLinkRefused(t *testing.T) {
	t.Parallel()
	r, outside := newRepo(t), newRepo(t)
	outsideHead := run(t, outside, "rev-parse", "HEAD")
	state := t.TempDir()
	p := Place{State: state, Root: "/r"}
	if err := os.MkdirAll(filepath.Join(p.Dir(), "l"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, p.Path("l", "1")); err != nil {
		t.Fatal(err)
	}
	_, err := Create(t.Context(), state, Spec{Dir: r, Path: p.Path("l", "1"), Branch: Branch("l", "1")})
	var ue *fsroot.UnsafeError
	if !errors.As(err, &ue) || !errors.Is(err, fsroot.ErrLink) || ue.Path != p.Path("l", "1") || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Create over a link: %v; want it refused, naming the link", err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(p.Dir(), "m")); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(t.Context(), state, Spec{Dir: r, Path: p.Path("m", "1"), Branch: Branch("m", "1")}); !errors.Is(err, fsroot.ErrLink) {
		t.Errorf("Create below a link: %v; want it refused", err)
	}

	w, err := Create(t.Context(), state, Spec{Dir: r, Path: p.Path("l", "2"), Branch: Branch("l", "2")})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(outside, "file.txt"), "changed outside\n")
	if err := os.Rename(w.Path, w.Path+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, w.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := Commit(t.Context(), state, w, "x"); !errors.Is(err, fsroot.ErrLink) {
		t.Errorf("Commit through a link: %v; want it refused", err)
	}
	if _, err := Remove(t.Context(), state, w, "x"); !errors.Is(err, fsroot.ErrLink) {
		t.Errorf("Remove of a link: %v; want it refused", err)
	}
	if work, err := Diff(t.Context(), state, w, false); err != nil || !strings.Contains(work.Worktree, "symbolic link") || work.Uncommitted != "" {
		t.Errorf("Diff of a worktree that is a link: %+v, %v; want the worktree refused", work, err)
	}
	if head := run(t, outside, "rev-parse", "HEAD"); head != outsideHead {
		t.Errorf("a commit was made in the repository the link points to")
	}
	if st := run(t, outside, "status", "--porcelain"); st != "M file.txt" {
		t.Errorf("the outside repository's index or files changed: %q", st)
	}
	if fi, err := os.Lstat(w.Path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was removed or followed: %v", err)
	}
}

// TestForeignCheckoutRefused: a worktree whose .git leads to another
// repository, or that has another branch checked out, is not committed
// to nor removed.
func TestForeignCheckoutRefused(t *testing.T) {
	t.Parallel()
	r, outside := newRepo(t), newRepo(t)
	outsideHead := run(t, outside, "rev-parse", "HEAD")
	state := t.TempDir()
	p := Place{State: state, Root: "/r"}
	w, err := Create(t.Context(), state, Spec{Dir: r, Path: p.Path("l", "1"), Branch: Branch("l", "1")})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.Path, "file.txt"), "work\n")
	write(t, filepath.Join(w.Path, ".git"), "gitdir: "+filepath.Join(outside, ".git")+"\n")
	if _, err := Commit(t.Context(), state, w, "x"); err == nil || !strings.Contains(err.Error(), "linked worktree") {
		t.Errorf("Commit with a .git that leads elsewhere: %v; want it refused", err)
	}
	if _, err := Remove(t.Context(), state, w, "x"); err == nil {
		t.Error("Remove with a .git that leads elsewhere succeeded")
	}
	if head := run(t, outside, "rev-parse", "HEAD"); head != outsideHead {
		t.Errorf("a commit was made in the other repository")
	}

	v, err := Create(t.Context(), state, Spec{Dir: r, Path: p.Path("l", "2"), Branch: Branch("l", "2")})
	if err != nil {
		t.Fatal(err)
	}
	run(t, v.Path, "checkout", "-q", "-b", "elsewhere")
	write(t, filepath.Join(v.Path, "file.txt"), "work\n")
	if _, err := Commit(t.Context(), state, v, "x"); err == nil || !strings.Contains(err.Error(), "not taskd/l/2") {
		t.Errorf("Commit with another branch checked out: %v; want it refused", err)
	}
	if got := run(t, r, "rev-parse", "elsewhere"); got != v.Base {
		t.Errorf("a commit was made on the other branch")
	}
}

// TestCreate_AfterRemovalByHand: a worktree whose directory was removed
// by hand (git still lists it) is made again on its branch; an empty
// directory at its place (an addition cut short) is taken. A branch
// checked out elsewhere is not taken over.
func TestCreate_AfterRemovalByHand(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	state := t.TempDir()
	p := Place{State: state, Root: "/r"}
	w, err := Create(t.Context(), state, Spec{Dir: r, Path: p.Path("l", "1"), Branch: Branch("l", "1")})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.Path, "new.txt"), "new\n")
	if w, err = Commit(t.Context(), state, w, "work"); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(w.Path); err != nil {
		t.Fatal(err)
	}
	again, err := Create(t.Context(), state, Spec{Dir: r, Path: w.Path, Branch: w.Branch})
	if err != nil {
		t.Fatalf("made again after its directory was removed by hand: %v", err)
	}
	if got := read(t, filepath.Join(again.Path, "new.txt")); got != "new\n" {
		t.Errorf("made again: new.txt %q, want the branch's work", got)
	}

	if err := os.MkdirAll(p.Path("l", "2"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(t.Context(), state, Spec{Dir: r, Path: p.Path("l", "2"), Branch: Branch("l", "2")}); err != nil {
		t.Errorf("Create over an empty directory: %v", err)
	}

	run(t, r, "branch", "taskd/l/3")
	run(t, r, "worktree", "add", "-q", filepath.Join(t.TempDir(), "mine"), "taskd/l/3")
	if _, err := Create(t.Context(), state, Spec{Dir: r, Path: p.Path("l", "3"), Branch: Branch("l", "3")}); err == nil || !strings.Contains(err.Error(), "already") {
		t.Errorf("Create of a branch checked out elsewhere: %v; want git's refusal", err)
	}
}
