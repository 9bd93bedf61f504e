package taskfile

import (
	"bytes"
	"syscall"

	"golang.org/x/sys/unix"
)

// onlyLabel reports whether the file open as fd has no extended attribute
// but an SELinux label, which every file of the directory has alike.
func onlyLabel(fd int) bool {
	var buf [256]byte
	n, err := unix.Flistxattr(fd, buf[:])
	switch {
	case err == unix.ENOTSUP:
		return true // none can be set here
	case err != nil:
		return false // ERANGE: more than a label
	}
	for _, name := range bytes.Split(bytes.TrimSuffix(buf[:n], []byte{0}), []byte{0}) {
		if len(name) > 0 && string(name) != "security.selinux" {
			return false
		}
	}
	return true
}

// openOnlyHere reports whether no process but this one has the file open
// as fd open, by taking a write lease on it (which Linux grants only then)
// and giving it up at once. An error says leases cannot tell here.
func openOnlyHere(fd int) (bool, error) {
	switch _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_WRLCK); err {
	case nil:
		unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
		return true, nil
	case unix.EAGAIN, syscall.EBUSY:
		return false, nil
	default:
		return false, err
	}
}
