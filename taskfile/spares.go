package taskfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/taskd/taskd/internal/fsroot"
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
type lockSpares struct {
	list string // the list directory
	dir  string // the pool's directory

	mu      sync.Mutex
	fd      int      // the pool's directory, open once adopted: renames go through it
	free    []string // names of kept directories, to try in turn
	next    int      // for names of new ones
	adopted bool     // leftovers of earlier processes added to free
	off     bool     // the rename cannot be used here
}

var spares sync.Map // list path → *lockSpares

func sparesFor(listPath string) *lockSpares {
	s, _ := spares.LoadOrStore(listPath, newSpares(listPath))
	return s.(*lockSpares)
}

func newSpares(listPath string) *lockSpares {
	return &lockSpares{list: listPath, dir: filepath.Join(listPath, spareDirName), fd: -1}
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
		// Once: the pool's directory is made and opened, following no
		// link (a link there would take every kept directory elsewhere:
		// the pool is given up instead), and the empty directories
		// earlier processes kept in it are used. (One with something in
		// it could not be removed as abandoned, were it left as a lock.)
		// Renames in and out of the pool go through the open directory,
		// so a link put in its place later leads nowhere.
		s.adopted = true
		fd, err := fsroot.OpenDirFD(s.list, spareDirName, true)
		if err != nil {
			s.off = true
			return "", false
		}
		s.fd = fd
		s.adopt(emptyDirs(fd))
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
	err := renameNoReplace(unix.AT_FDCWD, path, s.fd, name)
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

// emptyDirs returns the names of the empty directories in the directory
// open as fd, following no link.
func emptyDirs(fd int) []string {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil
	}
	unix.CloseOnExec(dup)
	f := os.NewFile(uintptr(dup), spareDirName)
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub, err := unix.Openat(fd, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		d := os.NewFile(uintptr(sub), e.Name())
		if inside, err := d.Readdirnames(1); err == io.EOF && len(inside) == 0 {
			names = append(names, e.Name())
		}
		d.Close()
	}
	return names
}

// maxKept bounds the directories adopted from earlier processes: more
// than this many writers at once on one list do not happen, and the rest
// would be kept forever.
const maxKept = 64

// adopt takes the empty directories earlier processes kept, up to maxKept,
// renamed after this process so that nobody takes them for a dead
// process's (taskd clean removes those); the rest are removed. Called with
// s.mu held.
func (s *lockSpares) adopt(names []string) {
	for i, name := range names {
		if i >= maxKept {
			unix.Unlinkat(s.fd, name, unix.AT_REMOVEDIR)
			continue
		}
		s.next++
		own := fmt.Sprintf("%d.%d", os.Getpid(), s.next)
		if name == own {
			s.free = append(s.free, name)
			continue
		}
		if err := renameNoReplace(s.fd, name, s.fd, own); err == nil {
			name = own
		}
		s.free = append(s.free, name)
	}
}

// removeLockDir removes the lock directory path: with rmdir, not
// os.Remove, which tries unlink first.
func removeLockDir(path string) {
	for syscall.Rmdir(path) == syscall.EINTR {
	}
}
