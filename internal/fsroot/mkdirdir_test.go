package fsroot_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/taskd/taskd/internal/fsroot"
)

// TestMkdirDir: the directory made is opened, and files written through
// it land in it; one already there is opened, not made; a link at the
// path or on the way, a FIFO or a file at the path fail, and nothing is
// made through a link.
func TestMkdirDir(t *testing.T) {
	base, outside := setup(t)
	write := func(d *fsroot.Dir, path string) {
		t.Helper()
		if err := d.WriteFile("f", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if data, err := os.ReadFile(filepath.Join(base, path, "f")); err != nil || string(data) != "x" {
			t.Errorf("%s/f: %q, %v", path, data, err)
		}
	}
	for _, tc := range []struct {
		path string
		made bool
	}{
		{".taskd/runs/1/1", true}, // the folders on the way made too
		{".taskd/runs/1/2", true},
		{".taskd/runs/1/2", false},
		{".taskd/runs/2/1", true}, // only the folder on the way next to it made
	} {
		d, made, err := fsroot.MkdirDir(base, filepath.Join(base, tc.path))
		if err != nil {
			t.Fatalf("MkdirDir(%s): %v", tc.path, err)
		}
		if made != tc.made {
			t.Errorf("MkdirDir(%s) made = %v, want %v", tc.path, made, tc.made)
		}
		write(d, tc.path)
		d.Close()
		if fi, err := os.Lstat(filepath.Join(base, tc.path)); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a directory, 0700", tc.path, fi, err)
		}
	}
	runs := filepath.Join(base, ".taskd", "runs")
	if err := os.Symlink(outside, filepath.Join(runs, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(runs, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runs, "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want error
	}{
		{"link", fsroot.ErrLink},
		{"link/1", fsroot.ErrLink},
		{"link/1/2", fsroot.ErrLink},
		{"fifo", fsroot.ErrNotRegular},
		{"file", nil}, // any error
	} {
		d, _, err := fsroot.MkdirDir(base, filepath.Join(runs, tc.path))
		if err == nil {
			d.Close()
			t.Errorf("MkdirDir(%s) succeeded", tc.path)
			continue
		}
		if tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("MkdirDir(%s): %v, want %v", tc.path, err, tc.want)
		}
		if errors.Is(err, fs.ErrExist) {
			t.Errorf("MkdirDir(%s): %v, an error that says the directory exists", tc.path, err)
		}
	}
	if got := entries(t, outside); len(got) != 0 {
		t.Errorf("made through a link: %v", got)
	}
}

// TestMkdirDir_Umask: what MkdirDir makes is 0700 whatever the umask, also
// one that removes the owner's bits, set while the process runs.
func TestMkdirDir_Umask(t *testing.T) {
	for _, mask := range []int{0o022, 0o277, 0o077, 0o700} {
		base, _ := setup(t)
		old := fsroot.SetUmask(mask)
		d, made, err := fsroot.MkdirDir(base, filepath.Join(base, "a", "b"))
		fsroot.SetUmask(old)
		if err != nil || !made {
			t.Fatalf("umask %04o: MkdirDir: made %v, %v", mask, made, err)
		}
		d.Close()
		for _, p := range []string{"a", "a/b"} {
			if fi, err := os.Stat(filepath.Join(base, p)); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("umask %04o: %s is %v (%v), want 0700", mask, p, fi.Mode().Perm(), err)
			}
		}
	}
}
