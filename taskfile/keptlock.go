package taskfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/taskd/taskd/internal/fsroot"
	"golang.org/x/sys/unix"
)

// A keptLock is a list's lock file (.lock) held open between writes by a
// long-running writer (KeepLockOpen), so that a write takes and releases
// its flock on the open file instead of opening, checking and closing
// the file each time: three system calls a write instead of six.
//
// The flock is what other processes wait on, and it is taken on the
// file the path names now: once taken, the path is looked at again, and
// if it no longer names the file held open (removed, replaced, the list
// made anew) the file is closed, which releases the flock, and the one
// there now is opened and locked instead, with the checks of an open
// (a FIFO or anything but a regular file refused, never waited on).
//
// One keptLock serves every Dir of the process on the same directory
// that keeps its lock open; its fields are used only under that
// directory's mutex (dirMutex), which lockList holds.
type keptLock struct {
	fd       int // -1: not open
	dev, ino uint64
}

// keptLocks holds one keptLock per list directory.
var keptLocks sync.Map // cleaned dir path → *keptLock

// KeepLockOpen makes d keep its list's lock file open between writes
// (see keptLock): for a writer that writes the list for as long as it
// runs, such as the daemon. The file stays open as long as the process
// runs, one descriptor per list directory. Call it before d is used.
func (d *Dir) KeepLockOpen() {
	k, _ := keptLocks.LoadOrStore(d.path, &keptLock{fd: -1})
	d.kept = k.(*keptLock)
}

// CloseLock closes the list's lock file kept open (KeepLockOpen), once
// its writer is done with the list: its directory is gone, and the
// descriptor would otherwise hold the removed file for as long as the
// process runs. A write made after it opens the lock file again.
func (d *Dir) CloseLock() {
	if d.kept == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.kept.fd >= 0 {
		d.kept.close()
	}
}

// maxLockReopens bounds how often lock opens the lock file anew because
// the path kept naming another file than the one it had just locked.
const maxLockReopens = 100

// lock takes the exclusive flock on the lock file at path, waiting until
// ctx is done; the returned function releases it. The caller holds the
// directory's mutex until then.
func (k *keptLock) lock(ctx context.Context, path string) (unlock func(), err error) {
	for range maxLockReopens {
		if k.fd < 0 {
			if err := k.open(path); err != nil {
				return nil, err
			}
		}
		if err := fsroot.FlockFD(ctx, k.fd, path, true); err != nil {
			k.close() // opened again next time
			return nil, errors.Join(ErrLocked, err)
		}
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err == nil && st.Dev == k.dev && st.Ino == k.ino {
			return k.unlock, nil
		}
		k.close() // not the file at path any more: releases its flock
	}
	return nil, &fs.PathError{Op: "lock", Path: path, Err: fmt.Errorf("%w: the lock file kept being replaced", ErrLocked)}
}

// open opens the lock file at path, making it if it is missing, as an
// unkept lock does.
func (k *keptLock) open(path string) error {
	fd, err := fsroot.OpenRegularFD(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	k.fd, k.dev, k.ino = fd, st.Dev, st.Ino
	return nil
}

// unlock releases the flock; a file whose flock cannot be released is
// closed, which releases it.
func (k *keptLock) unlock() {
	if err := unix.Flock(k.fd, unix.LOCK_UN); err != nil {
		k.close()
	}
}

func (k *keptLock) close() {
	unix.Close(k.fd)
	k.fd = -1
}
