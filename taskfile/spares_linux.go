package taskfile

import (
	"errors"
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

// exchange swaps the files at oldpath and newpath in one step
// (renameat2 with RENAME_EXCHANGE): it fails with ENOENT, changing
// nothing, if either is gone. A file system that cannot exchange is
// errors.ErrUnsupported.
func exchange(oldpath, newpath string) error {
	for {
		err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_EXCHANGE)
		switch err {
		case unix.EINTR:
			continue
		case unix.EINVAL, unix.ENOSYS, unix.ENOTSUP:
			return errors.ErrUnsupported
		}
		return err
	}
}
