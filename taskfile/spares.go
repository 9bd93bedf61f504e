package taskfile

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Lock directories kept for reuse. Taking Claude Code's lock on a file
// makes the directory FILE.lock and releasing it removes it: an inode
// allocated and freed, with a data block, for every write. A Dir that
// keeps its lock directories (KeepLockDirs) renames an empty directory
// kept in <list>/.taskd/locks into place instead, and back when done. The
// rename cannot replace a lock someone holds (renameat2 RENAME_NOREPLACE
// fails with EEXIST, as mkdir does), so the protocol is the same for every
// other party; the directory's mtime is set to now first, so that nobody
// takes it for abandoned. Where the rename cannot be used (not supported,
// the pool on another file system, refused), the pool is given up; where
// no kept directory is left, the lock is made with mkdir; a lock that
// cannot go back to the pool is removed. Only empty directories are
// adopted from an earlier process.
//
// Each write is spared an inode allocation, which on ext4 without a
// journal (where an inode freed in the last minutes is skipped by a scan
// at every allocation) can cost ten times as much after a tree was removed
// nearby.

// spareDirName is the pool's directory, relative to the list.
const spareDirName = ".taskd/locks"

// lockSpares is one list's pool of kept lock directories, shared by every
// Dir of the process opened on it that keeps its lock directories. Safe for
// concurrent use.
type lockSpares struct{ keptPool }

var spares sync.Map // list path → *lockSpares

func sparesFor(listPath string) *lockSpares {
	s, _ := spares.LoadOrStore(listPath, newSpares(listPath))
	return s.(*lockSpares)
}

func newSpares(listPath string) *lockSpares {
	return &lockSpares{newPool(listPath, spareDirName, syscall.S_IFDIR)}
}

// KeepLockDirs makes d keep the lock directories it makes for reuse (see
// above), and the files its writes replace (keptfiles.go): for a
// long-running writer such as the daemon. Call it before d is used.
func (d *Dir) KeepLockDirs() {
	d.spares = sparesFor(d.path)
	d.files = filesFor(d.path)
}

// acquire makes the lock directory path, from a kept directory if there
// is one, and returns that directory's name ("" if it was made). Like
// mkdir, it fails with an error satisfying errors.Is(err, fs.ErrExist) if
// path exists.
func (s *lockSpares) acquire(path string) (string, error) {
	for {
		name, ok := s.pop()
		if !ok {
			return "", os.Mkdir(path, 0o700)
		}
		now := unix.NsecToTimespec(time.Now().UnixNano())
		if err := unix.UtimesNanoAt(s.fd, name, []unix.Timespec{now, now}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue // gone (taken by another process, or removed): forget it
		}
		err := renameNoReplace(s.fd, name, unix.AT_FDCWD, path)
		switch {
		case err == nil:
			return name, nil
		case errors.Is(err, fs.ErrExist):
			s.push(name)
			return "", &fs.PathError{Op: "mkdir", Path: path, Err: syscall.EEXIST}
		case errors.Is(err, fs.ErrNotExist):
			continue // taken meanwhile; or the list is gone, and mkdir says so
		case transient(err):
			s.push(name)
			return "", os.Mkdir(path, 0o700)
		default:
			// Not supported here (EINVAL, ENOSYS), the pool on another
			// file system (EXDEV), refused: locks are made from now on.
			s.disable()
			return "", os.Mkdir(path, 0o700)
		}
	}
}

// release puts the lock directory path back into the pool under name (a
// new name if ""), or removes it if it cannot go there (a lock removed
// meanwhile as abandoned, or a pool whose directory was removed).
func (s *lockSpares) release(path, name string) {
	off := s.disabled()
	if name == "" {
		name = s.newName()
	}
	if off {
		removeLockDir(path)
		return
	}
	err := renameNoReplace(unix.AT_FDCWD, path, s.fd, name)
	switch {
	case err == nil:
		s.push(name)
	case errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) || transient(err):
		removeLockDir(path)
	default:
		s.disable() // as in acquire
		removeLockDir(path)
	}
}

// removeLockDir removes the lock directory path: with rmdir, not
// os.Remove, which tries unlink first.
func removeLockDir(path string) {
	for syscall.Rmdir(path) == syscall.EINTR {
	}
}
