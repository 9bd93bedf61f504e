package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/taskd/taskd/daemon/held"
	"github.com/taskd/taskd/internal/fsroot"
	"golang.org/x/sys/unix"
)

// LockFile returns the path of the lock a running daemon holds on root.
func LockFile(root string) string {
	return filepath.Join(root, daemonLockName)
}

// LockHolder reports whether a daemon holds root's lock ($ROOT/.taskd.lock)
// and, when one does, the pid the lock file records (0 if the file holds no
// pid). A missing lock file means no daemon: it is not an error, and
// LockHolder never creates the file.
//
// It asks by taking a shared lock on the file without waiting and
// releasing it at once. A daemon starting in that instant waits it out
// (lockRoot tries for lockPatience), so a command asking again and again
// (taskd wait, an agent's taskd run) never keeps a daemon from starting.
// It fails when the lock file cannot be
// opened or locked for another reason than being held (for example on a
// file system without flock).
func LockHolder(root string) (held bool, pid int, err error) {
	path := LockFile(root)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return false, 0, nil
	}
	f, err := fsroot.OpenRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return false, 0, fmt.Errorf("check the daemon lock %s: %w", path, err)
	}
	defer f.Close()
	switch err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err {
	case nil:
		return false, 0, nil // closing f releases it
	case unix.EWOULDBLOCK:
		return true, lockPID(f), nil
	default:
		return false, 0, fmt.Errorf("check the daemon lock %s: %w", path, err)
	}
}

// HeldTasks returns the tasks the daemon serving root holds back, as it
// publishes them (package held): none when no daemon serves root, or when
// the file was left by a daemon that is gone.
func HeldTasks(root string) []held.Task {
	pid, tasks, err := held.Read(root)
	if err != nil || pid == 0 {
		return nil
	}
	if running, holder, _ := LockHolder(root); !running || holder != pid {
		return nil
	}
	return tasks
}
