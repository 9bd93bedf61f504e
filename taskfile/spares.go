package taskfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
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
type lockSpares struct {
	dir string // the pool's directory

	mu      sync.Mutex
	free    []string // names of kept directories, to try in turn
	next    int      // for names of new ones
	adopted bool     // leftovers of earlier processes added to free
	off     bool     // the rename cannot be used here
}

var spares sync.Map // list path → *lockSpares

func sparesFor(listPath string) *lockSpares {
	s, _ := spares.LoadOrStore(listPath, &lockSpares{dir: filepath.Join(listPath, spareDirName)})
	return s.(*lockSpares)
}

// KeepLockDirs makes d keep the lock directories it makes for reuse (see
// above): for a long-running writer such as the daemon. Call it before d
// is used.
func (d *Dir) KeepLockDirs() { d.spares = sparesFor(d.path) }

// pop returns the name of a kept directory to try, if any.
func (s *lockSpares) pop() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.off {
		return "", false
	}
	if !s.adopted {
		// Once: the pool's directory is made, and the empty directories
		// earlier processes kept in it are used. (One with something in it
		// could not be removed as abandoned, were it left as a lock.)
		s.adopted = true
		os.MkdirAll(s.dir, 0o755)
		if entries, err := os.ReadDir(s.dir); err == nil {
			for _, e := range entries {
				if sub, err := os.ReadDir(filepath.Join(s.dir, e.Name())); e.IsDir() && err == nil && len(sub) == 0 {
					s.free = append(s.free, e.Name())
				}
			}
		}
	}
	if len(s.free) == 0 {
		return "", false
	}
	name := s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	return name, true
}

func (s *lockSpares) push(name string) {
	s.mu.Lock()
	s.free = append(s.free, name)
	s.mu.Unlock()
}

// disable stops using the pool: the rename is not supported here.
func (s *lockSpares) disable() {
	s.mu.Lock()
	s.off = true
	s.mu.Unlock()
}

// acquire makes the lock directory path, from a kept directory if there
// is one, and returns that directory's name ("" if it was made). Like
// mkdir, it fails with an error satisfying errors.Is(err, fs.ErrExist) if
// path exists.
func (s *lockSpares) acquire(path string) (string, error) {
	for {
		name, ok := s.pop()
		if !ok {
			return "", os.Mkdir(path, 0o755)
		}
		spare := filepath.Join(s.dir, name)
		now := time.Now()
		if err := os.Chtimes(spare, now, now); err != nil {
			continue // gone (taken by another process, or removed): forget it
		}
		err := renameNoReplace(spare, path)
		switch {
		case err == nil:
			return name, nil
		case errors.Is(err, fs.ErrExist):
			s.push(name)
			return "", &fs.PathError{Op: "mkdir", Path: path, Err: syscall.EEXIST}
		case errors.Is(err, fs.ErrNotExist):
			continue // taken meanwhile; or the list is gone, and mkdir says so
		default:
			// Not supported here (EINVAL, ENOSYS), the pool on another
			// file system (EXDEV), refused: locks are made from now on.
			s.disable()
			return "", os.Mkdir(path, 0o755)
		}
	}
}

// release puts the lock directory path back into the pool under name (a
// new name if ""), or removes it if it cannot go there. A lock removed
// meanwhile as abandoned is left alone.
func (s *lockSpares) release(path, name string) {
	s.mu.Lock()
	off := s.off
	if name == "" {
		s.next++
		name = fmt.Sprintf("%d.%d", os.Getpid(), s.next)
	}
	s.mu.Unlock()
	if off {
		removeLockDir(path)
		return
	}
	spare := filepath.Join(s.dir, name)
	err := renameNoReplace(path, spare)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Lstat(s.dir); serr == nil {
			return // the lock was removed as abandoned: nothing to release
		}
		// The pool's directory is gone.
		if os.MkdirAll(s.dir, 0o755) == nil {
			err = renameNoReplace(path, spare)
		}
	}
	switch {
	case err == nil:
		s.push(name)
	case errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist):
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
