package taskfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/internal/disktest"
	"golang.org/x/sys/unix"
)

// keptFilesDir is a list directory whose Dir keeps the files its writes
// replace, in a pool of the test's own, with task 1 in it.
func keptFilesDir(t *testing.T) *Dir {
	t.Helper()
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d.files = newFileSpares(d.path)
	if err := os.WriteFile(d.File("1"), []byte(`{"id": "1", "subject": "s"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

// setSubject writes task 1 with subject s through d.
func setSubject(t *testing.T, d *Dir, s string) {
	t.Helper()
	if _, err := d.Update(context.Background(), "1", func(tk *Task) error { tk.Subject = s; return nil }); err != nil {
		t.Fatal(err)
	}
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// pooled is the inodes of the files in d's pool.
func pooled(t *testing.T, d *Dir) []uint64 {
	t.Helper()
	entries, err := os.ReadDir(d.files.dir)
	if err != nil {
		t.Fatal(err)
	}
	var inos []uint64
	for _, e := range entries {
		inos = append(inos, inode(t, filepath.Join(d.files.dir, e.Name())))
	}
	return inos
}

// temps is the temporary files left in the list directory.
func temps(t *testing.T, d *Dir) []string {
	t.Helper()
	entries, err := os.ReadDir(d.path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".1.json") {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestKeptFiles: the file a write replaces is kept, and the next write
// makes its temporary file of it: the task file is then that inode, with
// exactly the new contents (an old content longer than the new is cut),
// the task file's mode, and nothing left in the list.
func TestKeptFiles(t *testing.T) {
	t.Parallel()
	d := keptFilesDir(t)
	if err := os.Chmod(d.File("1"), 0o600); err != nil {
		t.Fatal(err)
	}
	first := inode(t, d.File("1"))
	setSubject(t, d, strings.Repeat("long ", 2000)) // more than a block
	if got, want := pooled(t, d), []uint64{first}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pool holds inodes %v, want the replaced file's %v", got, want)
	}
	second := inode(t, d.File("1"))
	for i, subject := range []string{"short", "shorter", strings.Repeat("longer ", 3000), "s"} {
		setSubject(t, d, subject)
		got := inode(t, d.File("1"))
		if want := []uint64{first, second}[i%2]; got != want {
			t.Errorf("write %d: task file inode %d, want the kept %d", i, got, want)
		}
		data, err := os.ReadFile(d.File("1"))
		if err != nil {
			t.Fatal(err)
		}
		task, err := Parse(data, d.File("1"), "1")
		if err != nil {
			t.Fatalf("write %d: %v\n%q", i, err, data)
		}
		if task.Subject != subject {
			t.Errorf("write %d: subject %.20q…, want %.20q…", i, task.Subject, subject)
		}
		if fi, _ := os.Stat(d.File("1")); fi.Mode().Perm() != 0o600 {
			t.Errorf("write %d: mode %v, want the task file's 0600", i, fi.Mode().Perm())
		}
	}
	if got := temps(t, d); len(got) != 0 {
		t.Errorf("temporary files left in the list: %v", got)
	}
}

// TestKeptFiles_NotReused: a replaced file that anyone else could see
// change is never written again, but removed: one another process still
// has open (it goes on reading the old contents), one linked under
// another name, one with an extended attribute (an access list must not
// carry over to another task's file).
func TestKeptFiles_NotReused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		hold func(t *testing.T, path string) (check func(t *testing.T, old []byte))
	}{
		{"open in another process", func(t *testing.T, path string) func(*testing.T, []byte) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sleep", "60")
			cmd.Stdin = f // the file is the process's standard input
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			return func(t *testing.T, old []byte) {
				got, err := os.ReadFile(fmt.Sprintf("/proc/%d/fd/0", cmd.Process.Pid))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, old) {
					t.Errorf("the other process's open file holds %q, want the old contents %q", got, old)
				}
			}
		}},
		{"linked elsewhere", func(t *testing.T, path string) func(*testing.T, []byte) {
			link := filepath.Join(t.TempDir(), "backup.json")
			if err := os.Link(path, link); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T, old []byte) {
				if got, _ := os.ReadFile(link); !bytes.Equal(got, old) {
					t.Errorf("the link holds %q, want the old contents %q", got, old)
				}
			}
		}},
		{"extended attribute", func(t *testing.T, path string) func(*testing.T, []byte) {
			if err := unix.Setxattr(path, "user.shared", []byte("with someone"), 0); err != nil {
				t.Skipf("no user extended attributes here: %v", err)
			}
			return func(t *testing.T, _ []byte) {
				if sz, _ := unix.Getxattr(path, "user.shared", nil); sz > 0 {
					t.Errorf("the task file has the old file's attribute")
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := keptFilesDir(t)
			old, err := os.ReadFile(d.File("1"))
			if err != nil {
				t.Fatal(err)
			}
			held := inode(t, d.File("1"))
			check := tt.hold(t, d.File("1"))
			setSubject(t, d, "new") // the held file goes to the pool
			mid := inode(t, d.File("1"))
			setSubject(t, d, "newer") // it is not used, but removed
			// (A file removed frees its inode number for the next file
			// made: only one still open or linked keeps it.)
			if got := inode(t, d.File("1")); got == held && tt.name != "extended attribute" {
				t.Fatalf("the held file (inode %d) was written again", held)
			}
			if got, want := pooled(t, d), []uint64{mid}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("the pool holds %v, want %v: the file the last write replaced, the held one removed", got, want)
			}
			check(t, old)
			if got := temps(t, d); len(got) != 0 {
				t.Errorf("temporary files left in the list: %v", got)
			}
		})
	}
}

// TestKeptFiles_Leftovers: a pool an earlier process left is adopted,
// its regular files only, each renamed after this process; something else
// in it (a link, a FIFO) is never opened or followed.
func TestKeptFiles_Leftovers(t *testing.T) {
	t.Parallel()
	d := keptFilesDir(t)
	if err := os.MkdirAll(d.files.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(d.files.dir, "999999.1")
	if err := os.WriteFile(left, []byte("an old task file"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside")
	os.WriteFile(outside, []byte("keep me"), 0o644)
	os.Symlink(outside, filepath.Join(d.files.dir, "999999.2"))
	if err := syscall.Mkfifo(filepath.Join(d.files.dir, "999999.3"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := inode(t, left)
	done := make(chan struct{})
	go func() {
		defer close(done)
		setSubject(t, d, "new")
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the write did not return: it waits on the FIFO")
	}
	if got := inode(t, d.File("1")); got != want {
		t.Errorf("task file inode %d, want the left file's %d", got, want)
	}
	if got, _ := os.ReadFile(outside); string(got) != "keep me" {
		t.Errorf("the file outside the pool holds %q", got)
	}
	for _, name := range []string{"999999.2", "999999.3"} {
		if _, err := os.Lstat(filepath.Join(d.files.dir, name)); err != nil {
			t.Errorf("%s: %v (what is not a regular file is left alone)", name, err)
		}
	}
}

// TestKeptFiles_Full: a pool keeps at most maxKept files; the rest are
// removed.
func TestKeptFiles_Full(t *testing.T) {
	t.Parallel()
	d := keptFilesDir(t)
	for i := range maxKept + 3 {
		p := filepath.Join(d.path, fmt.Sprintf(".1.json%d", i))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		d.files.keep(p)
	}
	if got := len(pooled(t, d)); got != maxKept {
		t.Errorf("pool holds %d files, want %d", got, maxKept)
	}
	if got := temps(t, d); len(got) != 0 {
		t.Errorf("files neither kept nor removed: %v", got)
	}
}

// TestKeptFiles_FullDisk: on a full disk a write of a task file fails as
// it does without kept files, though a kept file's blocks could take it
// (nothing else could be written: the task is held, no agent starts), and
// leaves nothing behind; with room again, kept files are used again.
func TestKeptFiles_FullDisk(t *testing.T) {
	t.Parallel()
	disk := disktest.Small(t, 4<<20)
	list := filepath.Join(disk, "l")
	if err := os.Mkdir(list, 0o700); err != nil {
		t.Fatal(err)
	}
	d, err := Open(list)
	if err != nil {
		t.Fatal(err)
	}
	d.files = newFileSpares(d.path)
	if err := os.WriteFile(d.File("1"), []byte(`{"id": "1", "subject": "s"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	setSubject(t, d, "one")
	setSubject(t, d, "two")
	if len(pooled(t, d)) == 0 {
		t.Fatal("nothing kept")
	}
	before, _ := os.ReadFile(d.File("1"))
	disktest.Fill(t, filepath.Join(disk, "filler"))
	_, err = d.Update(context.Background(), "1", func(tk *Task) error { tk.Subject = "three"; return nil })
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("update on a full disk: %v, want ENOSPC", err)
	}
	if got, _ := os.ReadFile(d.File("1")); !bytes.Equal(got, before) {
		t.Errorf("the task file changed on a full disk:\n%s", got)
	}
	if got := temps(t, d); len(got) != 0 {
		t.Errorf("temporary files left in the list: %v", got)
	}
	if err := os.Remove(filepath.Join(disk, "filler")); err != nil {
		t.Fatal(err)
	}
	kept := pooled(t, d)
	setSubject(t, d, "three")
	if got := inode(t, d.File("1")); !slices.Contains(kept, got) {
		t.Errorf("with room again the task file is inode %d, want a kept one of %v", got, kept)
	}
}
