package taskfile

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Files kept for reuse. A write of a task file creates a temporary file
// and, once it has taken the task file's place, removes the old one: an
// inode allocated and one freed for every write, which on ext4 without a
// journal (where a scan at every allocation skips the inodes freed in the
// last minutes) is the dearest part of a write after its fsyncs. A Dir
// that keeps its lock directories (KeepLockDirs) also keeps the files its
// writes replace, in <list>/.taskd/files, and makes its next temporary
// file of one of them instead of a new one: renamed to the temporary
// name, emptied and written, the write protocol otherwise the same (the
// contents fsynced before the exchange, the directory after it).
//
// A file is used again only if nothing else can see it change: it is a
// regular file of this user with one link (a task file someone linked
// elsewhere, or a pool entry that a file system check found also under
// another name, is not), with no extended attribute but an SELinux label
// (an access list given to one task file must not carry over to
// another), and no process but this one has it open (a write lease can
// be taken on it, which Linux grants only then): a reader that opened the
// task file before it was replaced keeps reading the old contents. Any
// other file is removed, as before. Where a lease cannot be taken (leases
// turned off, a file system that has none) or the pool cannot be renamed
// into, files are not kept.

// filesDirName is the pool's directory, relative to the list.
const filesDirName = ".taskd/files"

// fileSpares is one list's pool of kept files.
type fileSpares struct {
	keptPool
	once     sync.Once
	uid, gid uint32 // the owner a new file of the list gets
}

var fileSpareLists sync.Map // list path → *fileSpares

func filesFor(listPath string) *fileSpares {
	s, _ := fileSpareLists.LoadOrStore(listPath, newFileSpares(listPath))
	return s.(*fileSpares)
}

func newFileSpares(listPath string) *fileSpares {
	return &fileSpares{keptPool: newPool(listPath, filesDirName, syscall.S_IFREG)}
}

// owner sets the owner a file created in the list gets: this user, and
// the list's group if the list is set-group-ID, else this group.
func (s *fileSpares) owner() {
	s.uid, s.gid = uint32(os.Geteuid()), uint32(os.Getegid())
	var st syscall.Stat_t
	if syscall.Stat(s.list, &st) == nil && st.Mode&syscall.S_ISGID != 0 {
		s.gid = st.Gid
	}
}

// take makes the temporary file tmp of a kept file, open for writing, and
// returns its descriptor and size: the caller writes from the start and
// cuts what is left of the old contents (emptying it first would free
// its blocks only to allocate them again). ok is false if no kept file
// fits (the caller creates one).
func (s *fileSpares) take(tmp string) (fd int, size int64, ok bool) {
	if s == nil {
		return -1, 0, false
	}
	s.once.Do(s.owner)
	for {
		name, ok := s.pop()
		if !ok {
			return -1, 0, false
		}
		if !s.roomy() {
			s.push(name)
			return -1, 0, false
		}
		err := renameNoReplace(s.fd, name, unix.AT_FDCWD, tmp)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // removed meanwhile
		case errors.Is(err, fs.ErrExist) || transient(err):
			s.push(name)
			return -1, 0, false
		case err != nil:
			s.disable()
			return -1, 0, false
		}
		fd, err := syscall.Open(tmp, syscall.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != nil {
			syscall.Unlink(tmp)
			continue
		}
		size, ok := s.reusable(fd)
		if !ok {
			syscall.Close(fd)
			syscall.Unlink(tmp)
			continue
		}
		return fd, size, true
	}
}

// reusable reports whether the file open as fd may be used again (see
// above), and its size.
func (s *fileSpares) reusable(fd int) (size int64, ok bool) {
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink != 1 || st.Uid != s.uid || st.Gid != s.gid {
		return 0, false
	}
	if !onlyLabel(fd) {
		return 0, false
	}
	alone, err := openOnlyHere(fd)
	if err != nil {
		s.disable() // no leases here: nothing tells
	}
	return st.Size, alone && err == nil
}

// minFree is the free space below which files are neither kept nor used
// again: on a disk that is full, or nearly, a write of a task file fails
// as it does without kept files (the task is held, no agent starts:
// docs/proof.md), instead of going on in a kept file's blocks while
// nothing else can be written, and the files a write replaces are removed,
// their space given back.
const minFree = 1 << 20

// roomy reports whether the pool's file system has minFree bytes free.
// The pool is ready (pop or room said so).
func (s *fileSpares) roomy() bool {
	var st unix.Statfs_t
	if unix.Fstatfs(s.fd, &st) != nil {
		return false
	}
	return st.Bavail*uint64(st.Bsize) >= minFree
}

// keep puts the file at tmp, which a write replaced, into the pool, or
// removes it.
func (s *fileSpares) keep(tmp string) {
	if !s.room() || !s.roomy() {
		syscall.Unlink(tmp)
		return
	}
	name := s.newName()
	err := renameNoReplace(unix.AT_FDCWD, tmp, s.fd, name)
	switch {
	case err == nil:
		s.push(name)
	case errors.Is(err, fs.ErrNotExist):
	case errors.Is(err, fs.ErrExist) || transient(err):
		syscall.Unlink(tmp)
	default:
		s.disable()
		syscall.Unlink(tmp)
	}
}
