package fsroot_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/internal/fsroot"
)

// RemoveAll removes a tree, counts the bytes of its files, removes a link
// inside it without touching what the link points to, and takes a missing
// path for removed.
func TestRemoveAll(t *testing.T) {
	base, outside := setup(t)
	target := filepath.Join(outside, "keep")
	os.WriteFile(target, []byte("outside"), 0o600)
	os.MkdirAll(filepath.Join(outside, "dir"), 0o700)
	os.WriteFile(filepath.Join(outside, "dir", "f"), []byte("x"), 0o600)
	run := filepath.Join(base, ".taskd", "runs", "a", "1")
	if err := os.MkdirAll(filepath.Join(run, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(run, "stdout.log"), []byte("12345"), 0o600)
	os.WriteFile(filepath.Join(run, "sub", "x"), []byte("123"), 0o600)
	os.Symlink(target, filepath.Join(run, "file-link"))
	os.Symlink(filepath.Join(outside, "dir"), filepath.Join(run, "dir-link"))

	got, err := fsroot.RemoveAll(base, filepath.Join(".taskd", "runs", "a"))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(8); got != want {
		t.Errorf("bytes removed = %d, want %d", got, want)
	}
	if _, err := os.Lstat(filepath.Join(base, ".taskd", "runs", "a")); !os.IsNotExist(err) {
		t.Errorf("the tree is still there: %v", err)
	}
	for _, p := range []string{target, filepath.Join(outside, "dir", "f")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s, outside the tree, is gone: %v", p, err)
		}
	}
	if _, err := fsroot.RemoveAll(base, filepath.Join(".taskd", "runs", "a")); err != nil {
		t.Errorf("RemoveAll of a missing path: %v, want nil", err)
	}
	if _, err := fsroot.RemoveAll(base, "../outside"); err == nil {
		t.Errorf("RemoveAll of a path outside the base succeeded")
	}
}
