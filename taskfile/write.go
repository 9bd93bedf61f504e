package taskfile

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/taskd/taskd/internal/fsroot"
)

// filePerm is the mode of task files taskd creates, before the umask; it is
// what Claude Code's own writes produce. Existing files keep their mode.
const filePerm fs.FileMode = 0o644

// pendingFile is new contents for a file, written and fsynced under a
// temporary name in the same directory ("."+base+digits, which the
// daemon's watcher ignores), waiting to replace the file. It is held as a
// bare descriptor: an *os.File would try, and fail, to register a regular
// file with the runtime's poller, five system calls for every write.
type pendingFile struct {
	fd      int
	name    string // the temporary file
	path    string // the file it is to replace
	renamed bool   // set once replace has renamed it (or it is gone); an exchange leaves the old file under name
	st      syscall.Stat_t
	stated  bool // st holds the file as written (stat)
}

// prepareFile writes data to a temporary file next to path and fsyncs it, so
// that once renamed the new file can never be torn or empty, even after a
// power loss. The file gets path's mode if path is a regular file, else
// filePerm (less the umask). Call Cleanup when done with it.
func prepareFile(dir, path string, data []byte) (*pendingFile, error) {
	perm, chmod := uint32(filePerm), false
	var st syscall.Stat_t
	switch err := syscall.Lstat(path, &st); {
	case err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG:
		perm, chmod = st.Mode&0o777, true
	case err != nil && err != syscall.ENOENT:
		return nil, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	p := &pendingFile{fd: -1, path: path}
	prefix := filepath.Join(dir, "."+filepath.Base(path))
	for range 10000 {
		p.name = prefix + strconv.FormatUint(uint64(rand.Int64()), 10)
		fd, err := syscall.Open(p.name, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, perm)
		if err == syscall.EEXIST || err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "create", Path: p.name, Err: err}
		}
		p.fd = fd
		break
	}
	if p.fd < 0 {
		return nil, &fs.PathError{Op: "create", Path: prefix, Err: fs.ErrExist}
	}
	if err := p.fill(data, perm, chmod); err != nil {
		p.Cleanup()
		return nil, err
	}
	return p, nil
}

// fill writes data to the temporary file, gives it mode perm when asked
// to (the umask may have narrowed it) and fsyncs it.
func (p *pendingFile) fill(data []byte, perm uint32, chmod bool) error {
	if chmod {
		var st syscall.Stat_t
		if err := syscall.Fstat(p.fd, &st); err != nil {
			return &fs.PathError{Op: "stat", Path: p.name, Err: err}
		}
		if st.Mode&0o777 != perm {
			if err := syscall.Fchmod(p.fd, perm); err != nil {
				return &fs.PathError{Op: "chmod", Path: p.name, Err: err}
			}
		}
	}
	for len(data) > 0 {
		n, err := syscall.Write(p.fd, data)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "write", Path: p.name, Err: err}
		}
		data = data[n:]
	}
	for {
		err := syscall.Fsync(p.fd)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "sync", Path: p.name, Err: err}
		}
		return nil
	}
}

// closeFD closes the temporary file's descriptor, once.
func (p *pendingFile) closeFD() error {
	if p.fd < 0 {
		return nil
	}
	err := syscall.Close(p.fd)
	p.fd = -1
	if err != nil && err != syscall.EINTR {
		return &fs.PathError{Op: "close", Path: p.name, Err: err}
	}
	return nil
}

// replace renames the temporary file over the destination. Readers see the
// old file or the new one, never a mix. prepareFile fsynced the contents,
// so this closes and renames without a second fsync: on a busy file system
// that fsync is not free, it waits for the journal commit under way.
func (p *pendingFile) replace() error {
	if err := p.closeFD(); err != nil {
		return err
	}
	// syscall.Rename, not os.Rename, which first stats the destination.
	err := syscall.Rename(p.name, p.path)
	for err == syscall.EINTR {
		err = syscall.Rename(p.name, p.path)
	}
	if err != nil {
		syscall.Unlink(p.name)
		p.renamed = true // nothing left for Cleanup
		return &os.LinkError{Op: "rename", Old: p.name, New: p.path, Err: err}
	}
	p.renamed = true
	return nil
}

// replaceExisting is replace of a file that must still be there: the
// temporary file and the file trade places in one step (exchange), which
// fails, the file left gone, if it is gone. A writer that found the file
// as it expected under the locks must not bring it back when someone
// removed it meanwhile without them (a person's rm, which takes no lock):
// a rename would create it again, and the task a person deleted would
// live on, its agent running. The old file, under the temporary name
// after the exchange, is removed by Cleanup, which the caller calls once
// it has released the locks. A missing file is an error satisfying
// errors.Is(err, fs.ErrNotExist). Where the system or the file system
// cannot exchange two files, it is replace, and the file may come back.
func (p *pendingFile) replaceExisting() error {
	if err := p.closeFD(); err != nil {
		return err
	}
	err := exchange(p.name, p.path)
	switch {
	case err == nil:
		return nil // p.name is the old file now, for Cleanup to remove
	case errors.Is(err, errors.ErrUnsupported):
		return p.replace()
	}
	syscall.Unlink(p.name)
	p.renamed = true // nothing left for Cleanup
	return &os.LinkError{Op: "replace", Old: p.name, New: p.path, Err: err}
}

// exchangedWith reports whether the file replaceExisting put in the
// temporary file's place is f, the file the writer checked, or whether
// it did not exchange them at all. Another is a file a writer that
// takes no lock renamed into place meanwhile.
func (p *pendingFile) exchangedWith(f taskFile) bool {
	if p.renamed {
		return true // renamed over, not exchanged: nothing to tell
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(p.name, &st); err != nil {
		return true // gone meanwhile: nothing to put back
	}
	return uint64(st.Dev) == f.dev && st.Ino == f.ino
}

// exchangeBack undoes replaceExisting's exchange: the file it took the
// place of goes back, and the temporary file holds the new contents
// again, for Cleanup to remove. If the file's place is empty by now (it
// was removed since), the file stays under the temporary name, and
// Cleanup removes it: it was removed last.
func (p *pendingFile) exchangeBack() {
	exchange(p.name, p.path)
}

// Cleanup closes the temporary file and removes it if it was not renamed.
func (p *pendingFile) Cleanup() {
	p.closeFD()
	if !p.renamed {
		syscall.Unlink(p.name)
		p.renamed = true
	}
}

// writeFile puts data at path durably: temporary file, fsync, rename (or,
// with create, a hard link that fails with fs.ErrExist instead of replacing
// a file someone else made), fsync of the directory.
func writeFile(dir, path string, data []byte, create bool) error {
	tmp, err := prepareFile(dir, path, data)
	if err != nil {
		return err
	}
	defer tmp.Cleanup()
	if create {
		if err := tmp.closeFD(); err != nil {
			return err
		}
		if err := os.Link(tmp.name, path); err != nil {
			return err
		}
	} else if err := tmp.replace(); err != nil {
		return err
	}
	return syncerFor(dir).sync()
}

// dirSyncer fsyncs one directory on behalf of many writers: a writer whose
// rename is done asks for a sync and waits until a sync that started after
// its rename has finished. Concurrent writers share one fsync (group
// commit) instead of queueing one each.
type dirSyncer struct {
	dir     string
	mu      sync.Mutex
	cond    *sync.Cond
	seq     uint64 // requests so far
	done    uint64 // requests up to here are durable
	running bool   // a sync is under way
}

var syncers sync.Map // dir → *dirSyncer

func syncerFor(dir string) *dirSyncer {
	if s, ok := syncers.Load(dir); ok {
		return s.(*dirSyncer)
	}
	s := &dirSyncer{dir: dir}
	s.cond = sync.NewCond(&s.mu)
	actual, _ := syncers.LoadOrStore(dir, s)
	return actual.(*dirSyncer)
}

// sync returns once the directory's entries as they were when sync was
// called are on disk.
func (s *dirSyncer) sync() error { return s.wait(s.request()) }

// request notes that the directory's entries as they are now are to be
// made durable, without waiting: wait(request()) is sync. Until someone
// waits, the request is met by the next fsync of the directory any
// writer makes, and costs nothing of its own.
func (s *dirSyncer) request() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

// wait returns once request mine is met: an fsync of the directory that
// began after the request has finished, another writer's or its own.
func (s *dirSyncer) wait(mine uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.done < mine {
		if s.running {
			s.cond.Wait()
			continue
		}
		s.running = true
		target := s.seq
		s.mu.Unlock()
		err := syncDir(s.dir)
		s.mu.Lock()
		s.running = false
		if err == nil {
			s.done = target
		}
		s.cond.Broadcast()
		if err != nil {
			return err
		}
	}
	return nil
}

// syncDir makes the directory's entries (a rename, a new link) durable.
// The descriptor is a bare one, as a pendingFile's is.
func syncDir(dir string) error {
	fd, err := fsroot.OpenDirectoryFD(dir)
	if err != nil {
		return err
	}
	for {
		if err = syscall.Fsync(fd); err != syscall.EINTR {
			break
		}
	}
	if cerr := syscall.Close(fd); err == nil && cerr != syscall.EINTR {
		err = cerr
	}
	if err != nil {
		return &fs.PathError{Op: "sync", Path: dir, Err: err}
	}
	return nil
}
