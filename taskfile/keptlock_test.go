package taskfile_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
	"golang.org/x/sys/unix"
)

// keptLockDir is a list whose writes keep its lock file open, as the
// daemon's do, holding task 1.
func keptLockDir(t *testing.T) *taskfile.Dir {
	t.Helper()
	d := mustOpen(t)
	d.KeepLockOpen()
	writeRaw(t, d, "1.json", `{"id": "1", "subject": "counter", "metadata": {}}`)
	if _, err := d.Update(t.Context(), "1", increment("count")); err != nil {
		t.Fatal(err) // the lock file is open from now on
	}
	return d
}

// flockOther takes the flock of the file at path through a descriptor of
// its own, as another process does, without waiting: ok is false when
// it is held. Closing fd releases it.
func flockOther(t *testing.T, path string) (fd int, ok bool) {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	switch err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err {
	case nil:
		return fd, true
	case unix.EWOULDBLOCK:
		return fd, false
	default:
		unix.Close(fd)
		t.Fatal(err)
	}
	return -1, false
}

// TestKeepLockOpen_ReleasedBetweenWrites: the lock file kept open is
// not locked between writes: another writer takes its flock at once
// after each, and a write waits while another holds it.
func TestKeepLockOpen_ReleasedBetweenWrites(t *testing.T) {
	t.Parallel()
	d := keptLockDir(t)
	lock := filepath.Join(d.Path(), ".lock")
	for i := range 3 {
		fd, ok := flockOther(t, lock)
		if !ok {
			unix.Close(fd)
			t.Fatalf("after write %d the list's lock is still held", i+1)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		_, err := d.Update(ctx, "1", increment("count"))
		cancel()
		if !errors.Is(err, taskfile.ErrLocked) {
			t.Errorf("write while another holds the list's lock: err %v, want ErrLocked", err)
		}
		unix.Close(fd)
		if _, err := d.Update(t.Context(), "1", increment("count")); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := readCounter(t, d, "1", "count"), int64(4); got != want {
		t.Errorf("count = %d, want %d", got, want)
	}
}

// TestKeepLockOpen_Replaced: a lock file removed, or replaced by
// another file, after the writer opened it is not the lock other
// writers take: the writer locks the file at the path, waiting while
// another holds it.
func TestKeepLockOpen_Replaced(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"removed", "renamed over"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			d := keptLockDir(t)
			lock := filepath.Join(d.Path(), ".lock")
			if how == "removed" {
				if err := os.Remove(lock); err != nil {
					t.Fatal(err)
				}
			} else {
				other := writeRaw(t, d, ".lock.new", "")
				if err := os.Rename(other, lock); err != nil {
					t.Fatal(err)
				}
			}
			fd, ok := flockOther(t, lock) // the file there now
			// Closed once: a second close would close whatever descriptor
			// a test running in parallel got under the same number since.
			release := sync.OnceFunc(func() { unix.Close(fd) })
			defer release()
			if !ok {
				t.Fatal("the new lock file is locked already")
			}
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			_, err := d.Update(ctx, "1", increment("count"))
			cancel()
			if !errors.Is(err, taskfile.ErrLocked) {
				t.Fatalf("write while another holds the lock file now at the path: err %v, want ErrLocked", err)
			}
			release()
			if _, err := d.Update(t.Context(), "1", increment("count")); err != nil {
				t.Fatal(err)
			}
			if got, want := readCounter(t, d, "1", "count"), int64(2); got != want {
				t.Errorf("count = %d, want %d", got, want)
			}
		})
	}
}

// TestKeepLockOpen_FIFO: a FIFO put in the lock file's place after the
// writer opened it fails the next write at once, as it does a writer
// that opens the lock file for every write; nothing is written.
func TestKeepLockOpen_FIFO(t *testing.T) {
	t.Parallel()
	d := keptLockDir(t)
	lock := filepath.Join(d.Path(), ".lock")
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(lock, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := d.Update(ctx, "1", increment("count"))
	if !errors.Is(err, fsroot.ErrNotRegular) || ctx.Err() != nil {
		t.Errorf("write with a FIFO as the lock file: err %v (context: %v), want ErrNotRegular at once", err, ctx.Err())
	}
	if got, want := readCounter(t, d, "1", "count"), int64(1); got != want {
		t.Errorf("count = %d, want %d", got, want)
	}
}

// TestKeepLockOpen_OneOpen: writes of a list that keeps its lock file
// open open it once between them all, and leave it open, not locked.
func TestKeepLockOpen_OneOpen(t *testing.T) {
	t.Parallel()
	d := keptLockDir(t)
	for range 5 {
		if _, err := d.Update(t.Context(), "1", increment("count")); err != nil {
			t.Fatal(err)
		}
	}
	lock := filepath.Join(d.Path(), ".lock")
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	open := 0
	for _, e := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.TrimSuffix(target, " (deleted)") == lock {
			open++
		}
	}
	if got, want := open, 1; got != want {
		t.Errorf("descriptors open on %s after 6 writes: %d, want %d", lock, got, want)
	}
}
