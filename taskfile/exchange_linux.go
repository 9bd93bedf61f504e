package taskfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

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
