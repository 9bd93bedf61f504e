package fsroot_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/internal/fsroot"
)

// TestWriteShared: a file of a user's project is made 0644 in directories
// made 0755 (less the umask, here 022), replaces a link at its name, and
// is refused, writing nothing, when a directory on the way is a link.
func TestWriteShared(t *testing.T) {
	old := fsroot.SetUmask(0o022)
	defer fsroot.SetUmask(old)
	base, outside := t.TempDir(), t.TempDir()
	if err := fsroot.WriteShared(base, filepath.Join(base, "a", "b", "f.md"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := fsroot.MkdirShared(base, filepath.Join(base, "c")); err != nil {
		t.Fatal(err)
	}
	if err := fsroot.MkdirShared(base, base); err != nil {
		t.Errorf("MkdirShared of the base itself: %v", err)
	}
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{"a", 0o755 | os.ModeDir}, {"a/b", 0o755 | os.ModeDir}, {"a/b/f.md", 0o644}, {"c", 0o755 | os.ModeDir}} {
		fi, err := os.Lstat(filepath.Join(base, c.path))
		if err != nil || fi.Mode() != c.want {
			t.Errorf("%s: mode %v, %v; want %v", c.path, fi.Mode(), err, c.want)
		}
	}
	if err := os.Symlink(filepath.Join(outside, "t.md"), filepath.Join(base, "l.md")); err != nil {
		t.Fatal(err)
	}
	if err := fsroot.WriteShared(base, filepath.Join(base, "l.md"), []byte("y")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(base, "l.md")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the link at the name was not replaced: %v %v", fi.Mode(), err)
	}
	if err := os.Symlink(outside, filepath.Join(base, "out")); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		fsroot.WriteShared(base, filepath.Join(base, "out", "f.md"), []byte("z")),
		fsroot.WriteShared(base, filepath.Join(base, "out", "new", "f.md"), []byte("z")),
		fsroot.MkdirShared(base, filepath.Join(base, "out", "new")),
	} {
		if !errors.Is(err, fsroot.ErrLink) {
			t.Errorf("a link on the way: %v, want ErrLink", err)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("written outside: %s", entries[0].Name())
	}
}
