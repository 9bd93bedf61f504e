package taskfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func inodeOf(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() {
		t.Fatalf("%s is not a directory", path)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

func kept(t *testing.T, s *lockSpares) []string {
	t.Helper()
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestKeepLockDirs: a Dir that keeps its lock directories takes each lock
// by renaming the same kept directory into place, fresh, and never over a
// lock someone else holds; another process adopts what it finds kept.
func TestKeepLockDirs(t *testing.T) {
	t.Parallel()
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d.KeepLockDirs()
	if err := os.WriteFile(d.File("1"), []byte(`{"id": "1", "subject": "s"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lock := d.File("1") + ".lock"

	unlock, err := d.lockFile(ctx, d.File("1"))
	if err != nil {
		t.Fatal(err)
	}
	first := inodeOf(t, lock)
	unlock()
	if _, err := os.Lstat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the lock is still there after unlock: %v", err)
	}
	names := kept(t, d.spares)
	if len(names) != 1 || inodeOf(t, filepath.Join(d.spares.dir, names[0])) != first {
		t.Fatalf("kept %v, want the lock directory (inode %d)", names, first)
	}

	// Reused, with a fresh mtime however old the kept directory is.
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(d.spares.dir, names[0]), old, old)
	unlock, err = d.lockFile(ctx, d.File("1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := inodeOf(t, lock); got != first {
		t.Errorf("lock directory inode %d, want the kept %d", got, first)
	}
	if fi, _ := os.Lstat(lock); time.Since(fi.ModTime()) > lockStale/2 {
		t.Errorf("lock directory mtime %v: it would look abandoned", fi.ModTime())
	}
	unlock()

	// A lock someone holds is neither replaced nor taken.
	if err := os.Mkdir(lock, 0o755); err != nil {
		t.Fatal(err)
	}
	theirs := inodeOf(t, lock)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := d.lockFile(short, d.File("1")); !errors.Is(err, ErrLocked) {
		t.Fatalf("lockFile over a held lock: %v, want ErrLocked", err)
	}
	if got := inodeOf(t, lock); got != theirs {
		t.Fatalf("the held lock was replaced (inode %d, was %d)", got, theirs)
	}
	if names := kept(t, d.spares); len(names) != 1 {
		t.Fatalf("kept %v after a failed lock, want the one directory", names)
	}
	os.Remove(lock)

	// Another process finds the kept directory and uses it.
	other := &Dir{path: d.path, mu: d.mu, spares: newSpares(d.path)}
	unlock, err = other.lockFile(ctx, d.File("1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := inodeOf(t, lock); got != first {
		t.Errorf("another process made inode %d, want the kept %d", got, first)
	}
	unlock()
}

// TestKeepLockDirs_Unsupported: where the rename cannot be used, locks are
// made and removed.
func TestKeepLockDirs_Unsupported(t *testing.T) {
	t.Parallel()
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d.spares = newSpares(d.path)
	d.spares.disable()
	unlock, err := d.lockFile(context.Background(), d.File("1"))
	if err != nil {
		t.Fatal(err)
	}
	inodeOf(t, d.File("1")+".lock")
	unlock()
	if _, err := os.Lstat(d.File("1") + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the lock is still there after unlock: %v", err)
	}
	if _, err := os.Stat(d.spares.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a pool was made where it cannot be used: %v", err)
	}
}

// TestKeepLockDirs_OtherFileSystem: a pool whose directory is a link (here
// to another file system) is given up, never followed, and locks are made
// and removed, without a failed write; nothing is taken from or put into
// the link's target.
func TestKeepLockDirs_OtherFileSystem(t *testing.T) {
	t.Parallel()
	elsewhere, err := os.MkdirTemp("/dev/shm", "taskd-pool-")
	if err != nil {
		t.Skip("no /dev/shm:", err)
	}
	t.Cleanup(func() { os.RemoveAll(elsewhere) })
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var list, other syscall.Stat_t
	syscall.Stat(d.path, &list)
	syscall.Stat(elsewhere, &other)
	if list.Dev == other.Dev {
		t.Skip("/dev/shm is on the same file system as the test's directory")
	}
	if err := os.Mkdir(filepath.Join(d.path, ".taskd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(d.path, spareDirName)); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(elsewhere, "left"), 0o755); err != nil { // kept by an earlier process
		t.Fatal(err)
	}
	d.KeepLockDirs()
	for i := range 3 {
		unlock, err := d.lockFile(context.Background(), d.File("1"))
		if err != nil {
			t.Fatalf("lock %d: %v", i, err)
		}
		inodeOf(t, d.File("1")+".lock")
		unlock()
		if _, err := os.Lstat(d.File("1") + ".lock"); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("lock %d is still there after unlock: %v", i, err)
		}
	}
	if !d.spares.off {
		t.Error("the pool is still in use")
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 1 || entries[0].Name() != "left" {
		t.Errorf("the link's target holds %v, want only what was there", entries)
	}
}

// TestKeepLockDirs_LinkedLater: a pool whose directory is replaced by a
// link while in use is not followed: kept directories go into, and come
// from, the directory that was opened.
func TestKeepLockDirs_LinkedLater(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	d.KeepLockDirs()
	ctx := context.Background()
	unlock, err := d.lockFile(ctx, d.File("1"))
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	pool := filepath.Join(d.path, spareDirName)
	if err := os.Rename(pool, pool+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, pool); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		unlock, err := d.lockFile(ctx, d.File("1"))
		if err != nil {
			t.Fatalf("lock %d: %v", i, err)
		}
		unlock()
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("the link's target got %v", entries)
	}
}

// Adopting what earlier processes kept renames each directory after this
// process and removes those past maxKept, so the pool stays bounded
// however many processes came and went.
func TestKeepLockDirs_AdoptBounded(t *testing.T) {
	t.Parallel()
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d.KeepLockDirs()
	d.spares = newSpares(d.path) // this test's own pool, not the process's
	if err := os.MkdirAll(d.spares.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const left = maxKept + 10
	for i := range left {
		if err := os.Mkdir(filepath.Join(d.spares.dir, fmt.Sprintf("999999%d.%d", i%3, i)), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	unlock, err := d.lockFile(t.Context(), d.File("1"))
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	names := kept(t, d.spares)
	if got, want := len(names), maxKept; got != want {
		t.Errorf("kept %d directories, want %d", got, want)
	}
	own := fmt.Sprintf("%d.", os.Getpid())
	for _, n := range names {
		if !strings.HasPrefix(n, own) {
			t.Errorf("kept %q, want it named after this process (%s…)", n, own)
		}
	}
}
