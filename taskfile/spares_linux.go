package taskfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames oldpath, relative to the directory open as
// olddir (or the working directory, unix.AT_FDCWD), to newpath, relative
// to newdir, unless newpath exists.
func renameNoReplace(olddir int, oldpath string, newdir int, newpath string) error {
	for {
		err := unix.Renameat2(olddir, oldpath, newdir, newpath, unix.RENAME_NOREPLACE)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
		}
		return nil
	}
}
