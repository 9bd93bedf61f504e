package fsroot

import (
	"errors"
	"syscall"
)

// WriteFailed reports whether err is a write that failed for a reason of
// the file system or the system, not of the path written: no space left
// (or no quota), an I/O error, a read-only file system, no descriptors or
// memory. Such a write may work later as it is; taskd holds the work that
// needs it and tries again (docs/troubleshooting.md).
func WriteFailed(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case syscall.ENOSPC, syscall.EDQUOT, syscall.EIO, syscall.EROFS, syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.EFBIG:
		return true
	}
	return false
}
