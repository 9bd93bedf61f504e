package taskfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/taskd/taskd/internal/fsroot"
	"golang.org/x/sys/unix"
)

// keptPool is a directory of a list (under .taskd) holding entries kept
// for reuse, each named PID.N after the process that put it there: the
// lock directories (spares.go) and the files writes replaced
// (keptfiles.go). One pool per list and kind is shared by every Dir of
// the process opened on the list. Safe for concurrent use.
type keptPool struct {
	list string // the list directory
	rel  string // the pool's directory, relative to the list
	dir  string // the pool's directory
	kind uint32 // syscall.S_IFDIR or S_IFREG: what it keeps

	mu      sync.Mutex
	fd      int      // the pool's directory, open once adopted: renames go through it
	free    []string // names of kept entries, to try in turn
	next    int      // for names of new ones
	adopted bool     // leftovers of earlier processes added to free
	off     bool     // the pool cannot be used here
}

func newPool(list, rel string, kind uint32) keptPool {
	return keptPool{list: list, rel: rel, dir: filepath.Join(list, rel), kind: kind, fd: -1}
}

// pop returns the name of a kept entry to try, if any.
func (s *keptPool) pop() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ready() || len(s.free) == 0 {
		return "", false
	}
	name := s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	return name, true
}

// room reports whether one more entry may go into the pool.
func (s *keptPool) room() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready() && len(s.free) < maxKept
}

// ready reports whether the pool can be used. The first call makes and
// opens the pool's directory, following no link (a link there would take
// every kept entry elsewhere: the pool is given up instead), and adopts
// what earlier processes kept in it. Renames in and out of the pool go
// through the open directory, so a link put in its place later leads
// nowhere. Called with s.mu held.
func (s *keptPool) ready() bool {
	if s.off {
		return false
	}
	if !s.adopted {
		s.adopted = true
		fd, err := fsroot.OpenDirFD(s.list, s.rel, true)
		if err != nil {
			s.off = true
			return false
		}
		s.fd = fd
		s.adopt(leftovers(fd, s.rel, s.kind))
	}
	return true
}

func (s *keptPool) push(name string) {
	s.mu.Lock()
	s.free = append(s.free, name)
	s.mu.Unlock()
}

// disable stops using the pool: its renames are not supported here.
func (s *keptPool) disable() {
	s.mu.Lock()
	s.off = true
	s.mu.Unlock()
}

func (s *keptPool) disabled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.off
}

// newName is a name for an entry this process puts in the pool.
func (s *keptPool) newName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	return fmt.Sprintf("%d.%d", os.Getpid(), s.next)
}

// transient reports whether err, from a rename in or out of a pool, says
// something about this moment (a full disk, a quota, a failing or
// read-only file system) rather than that the rename cannot be used here:
// the pool is not given up for it.
func transient(err error) bool {
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EIO, syscall.EROFS, syscall.ENOMEM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// maxKept bounds the entries a pool keeps: more than this many writers at
// once on one list do not happen, and the rest would be kept forever.
const maxKept = 64

// adopt takes the entries earlier processes kept, up to maxKept, renamed
// after this process so that nobody takes them for a dead process's
// (taskd clean removes those); the rest are removed. Called with s.mu
// held.
func (s *keptPool) adopt(names []string) {
	for i, name := range names {
		if i >= maxKept {
			flags := 0
			if s.kind == syscall.S_IFDIR {
				flags = unix.AT_REMOVEDIR
			}
			unix.Unlinkat(s.fd, name, flags)
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

// leftovers returns the names of the entries of kind in the directory
// open as fd (named rel), following no link: directories only if empty
// (one with something in it could not be removed as abandoned, were it
// left as a lock), regular files.
func leftovers(fd int, rel string, kind uint32) []string {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil
	}
	unix.CloseOnExec(dup)
	f := os.NewFile(uintptr(dup), rel)
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		switch {
		case kind == syscall.S_IFREG && e.Type().IsRegular():
			names = append(names, e.Name())
		case kind == syscall.S_IFDIR && e.IsDir() && emptyDir(fd, e.Name()):
			names = append(names, e.Name())
		}
	}
	return names
}

// emptyDir reports whether name, in the directory open as fd, is a
// directory with nothing in it.
func emptyDir(fd int, name string) bool {
	sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	d := os.NewFile(uintptr(sub), name)
	defer d.Close()
	inside, err := d.Readdirnames(1)
	return err == io.EOF && len(inside) == 0
}
