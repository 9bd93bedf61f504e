package taskfile

import (
	"io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/google/renameio/v2"

	"github.com/taskd/taskd/internal/fsroot"
)

// filePerm is the mode of task files taskd creates, before the umask; it is
// what Claude Code's own writes produce. Existing files keep their mode.
const filePerm fs.FileMode = 0o644

// pendingFile is new contents for a file, written and fsynced under a
// temporary name in the same directory (renameio names it "."+base+digits,
// which the daemon's watcher ignores), waiting to replace the file.
type pendingFile struct {
	pf      *renameio.PendingFile
	path    string // the file it is to replace
	renamed *bool  // set once replace has renamed it
}

// prepareFile writes data to a temporary file next to path and fsyncs it, so
// that once renamed the new file can never be torn or empty, even after a
// power loss. Call Cleanup when done with it.
func prepareFile(dir, path string, data []byte) (pendingFile, error) {
	pf, err := renameio.NewPendingFile(path,
		renameio.WithTempDir(dir), // never /tmp: see the package documentation
		renameio.WithPermissions(filePerm),
		renameio.WithExistingPermissions())
	if err != nil {
		return pendingFile{}, err
	}
	if _, err := pf.Write(data); err != nil {
		pf.Cleanup()
		return pendingFile{}, err
	}
	if err := pf.Sync(); err != nil {
		pf.Cleanup()
		return pendingFile{}, err
	}
	return pendingFile{pf: pf, path: path, renamed: new(bool)}, nil
}

// replace renames the temporary file over the destination. Readers see the
// old file or the new one, never a mix. prepareFile fsynced the contents,
// so this closes and renames without the second fsync that renameio's
// CloseAtomicallyReplace would make: on a busy file system that fsync is not
// free, it waits for the journal commit under way.
func (p pendingFile) replace() error {
	if err := p.pf.File.Close(); err != nil {
		return err
	}
	// syscall.Rename, not os.Rename, which first stats the destination.
	err := syscall.Rename(p.pf.Name(), p.path)
	for err == syscall.EINTR {
		err = syscall.Rename(p.pf.Name(), p.path)
	}
	if err != nil {
		os.Remove(p.pf.Name())
		*p.renamed = true // nothing left for Cleanup
		return &os.LinkError{Op: "rename", Old: p.pf.Name(), New: p.path, Err: err}
	}
	*p.renamed = true
	return nil
}

// Cleanup removes the temporary file if it was not renamed.
func (p pendingFile) Cleanup() {
	if p.pf != nil && !*p.renamed {
		p.pf.Cleanup()
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
		if err := os.Link(tmp.pf.Name(), path); err != nil {
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
func (s *dirSyncer) sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	mine := s.seq
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
func syncDir(dir string) error {
	f, err := fsroot.OpenDirectory(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &fs.PathError{Op: "sync", Path: dir, Err: err}
	}
	return nil
}
