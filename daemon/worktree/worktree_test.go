package worktree

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo makes a git repository with one commit of file.txt in a new
// directory with a subdirectory sub, or skips the test without git.
func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "sub", "keep"), nil, 0o644)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first"}} {
		if out, err := git(t.Context(), dir, args...); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return dir
}

// TestCreateAndRemove: two tasks' worktrees of one repository, each on
// its branch, from the task's directory inside the repository; made
// again, the same worktree is found; removed, a worktree's uncommitted
// work is committed to its branch, which stays.
func TestCreateAndRemove(t *testing.T) {
	t.Parallel()
	r := repo(t)
	area := t.TempDir()
	a, err := Create(t.Context(), filepath.Join(r, "sub"), filepath.Join(area, "1"), Branch("l", "1"), "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Create(t.Context(), r, filepath.Join(area, "2"), Branch("l", "2"), "")
	if err != nil {
		t.Fatal(err)
	}
	if a.Dir != filepath.Join(area, "1", "sub") || b.Dir != filepath.Join(area, "2") || a.Branch != "taskd/l-1" {
		t.Errorf("worktrees %+v and %+v", a, b)
	}
	again, err := Create(t.Context(), filepath.Join(r, "sub"), a.Path, a.Branch, "")
	if err != nil || again != a {
		t.Errorf("made again: %+v, %v; want %+v", again, err, a)
	}
	os.WriteFile(filepath.Join(a.Path, "file.txt"), []byte("changed by 1\n"), 0o644)
	os.WriteFile(filepath.Join(a.Path, "new.txt"), []byte("new\n"), 0o644)
	if err := Remove(t.Context(), a.Path, "taskd: work left by task l/1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.Path); !os.IsNotExist(err) {
		t.Errorf("the worktree is still there: %v", err)
	}
	show, err := git(t.Context(), r, "show", "taskd/l-1:file.txt")
	if err != nil || show != "changed by 1" {
		t.Errorf("the branch has file.txt %q (%v), want the worktree's change", show, err)
	}
	msg, _ := git(t.Context(), r, "log", "-1", "--format=%s", "taskd/l-1")
	if msg != "taskd: work left by task l/1" {
		t.Errorf("the branch's last commit is %q", msg)
	}
	main, _ := os.ReadFile(filepath.Join(r, "file.txt"))
	if string(main) != "one\n" {
		t.Errorf("the repository's own checkout changed: %q", main)
	}
	list, _ := git(t.Context(), r, "worktree", "list")
	if strings.Contains(list, a.Path) || !strings.Contains(list, b.Path) {
		t.Errorf("git worktree list:\n%s", list)
	}
	// Made again after its removal: the branch is checked out as it is.
	c, err := Create(t.Context(), r, a.Path, a.Branch, "")
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(c.Path, "new.txt")); string(data) != "new\n" {
		t.Errorf("the branch's work is not in the new worktree: %q", data)
	}
	if err := Remove(t.Context(), filepath.Join(area, "missing"), "x"); err != nil {
		t.Errorf("Remove of nothing: %v", err)
	}
}

func TestCreate_NoRepository(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	_, err := Create(t.Context(), t.TempDir(), filepath.Join(t.TempDir(), "1"), "taskd/l-1", "")
	if err == nil || !strings.Contains(err.Error(), "not in a git repository") {
		t.Errorf("Create outside a repository: %v", err)
	}
}
