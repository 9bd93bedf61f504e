package taskfile

import (
	"io/fs"
	"os"

	"github.com/google/renameio/v2"
)

// filePerm is the mode of task files taskd creates, before the umask; it is
// what Claude Code's own writes produce. Existing files keep their mode.
const filePerm fs.FileMode = 0o644

// writeFile puts data at path so that a reader sees either the old file or
// the new one, never a mix, and so that the new contents survive a power
// loss once writeFile returns:
//
//  1. write a temporary file in the same directory (renameio names it
//     "."+base+digits, which the daemon's watcher ignores),
//  2. fsync it,
//  3. rename it over path (or, with create, hard-link it to path, which
//     fails with fs.ErrExist instead of replacing a file someone else made),
//  4. fsync the directory, so the rename itself is durable.
//
// The temporary file is removed on every error path.
func writeFile(dir, path string, data []byte, create bool) error {
	pf, err := renameio.NewPendingFile(path,
		renameio.WithTempDir(dir), // never /tmp: see the package documentation
		renameio.WithPermissions(filePerm),
		renameio.WithExistingPermissions())
	if err != nil {
		return err
	}
	defer pf.Cleanup()
	if _, err := pf.Write(data); err != nil {
		return err
	}
	if create {
		if err := pf.Sync(); err != nil {
			return err
		}
		if err := os.Link(pf.Name(), path); err != nil {
			return err
		}
		if err := pf.Cleanup(); err != nil { // removes the temporary name
			return err
		}
	} else if err := pf.CloseAtomicallyReplace(); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes the directory's entries (a rename, a new link) durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
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
