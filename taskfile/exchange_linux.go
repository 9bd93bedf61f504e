package taskfile

import (
	"errors"
	"io/fs"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// exchange swaps the files at oldpath and newpath in one step
// (renameat2 with RENAME_EXCHANGE): it fails with ENOENT, changing
// nothing, if either is gone. A file system that cannot exchange
// (EINVAL: NFS, FUSE, 9p, CIFS; ENOTSUP), a kernel without renameat2
// (ENOSYS), or a system call filter that refuses it (EPERM, what older
// container runtimes' default profiles answer a call they do not know)
// is errors.ErrUnsupported: the caller renames instead, and a rename
// that is not permitted either fails with its own error.
func exchange(oldpath, newpath string) error {
	for {
		err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_EXCHANGE)
		switch err {
		case unix.EINTR:
			continue
		case unix.EINVAL, unix.ENOSYS, unix.ENOTSUP, unix.EPERM:
			return errors.ErrUnsupported
		}
		return err
	}
}

// lastChange is the later of fi's modification and change times: a rename
// or an exchange changes the second only.
func lastChange(fi fs.FileInfo) time.Time {
	t := fi.ModTime()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if c := time.Unix(st.Ctim.Unix()); c.After(t) {
			return c
		}
	}
	return t
}
