package fsroot

import (
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// walk opens base and then each of elems in turn as a directory, relative
// to the one before and following no link, making a missing one (0700)
// when create is set. It returns the last directory's descriptor.
func walk(base string, elems []string, create bool) (int, error) {
	var mode uint32
	if create {
		mode = DirMode
	}
	return walkMaking(base, elems, mode)
}

// walkMaking is walk making the missing directories with mode (less the
// umask, unless mode is DirMode), none when mode is 0.
func walkMaking(base string, elems []string, mode uint32) (int, error) {
	create := mode != 0
	fd, err := openat(unix.AT_FDCWD, base, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: base, Err: err}
	}
	if len(elems) == 0 {
		return fd, nil
	}
	next, err := openBeneath(fd, elems)
	if err == nil {
		unix.Close(fd)
		return next, nil
	}
	if err == unix.ENOENT && create && len(elems) > 1 {
		// Most often only the last is missing (a task's first run
		// folder): its parent opened in one call, it is made there.
		if parent, err := openBeneath(fd, elems[:len(elems)-1]); err == nil {
			unix.Close(fd)
			return makeLast(parent, base, elems, mode)
		}
	}
	for i, e := range elems {
		next, err := openat(fd, e, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		if err == unix.ENOENT && create {
			err = mkdiratMode(fd, e, mode)
			if err == nil || err == unix.EEXIST {
				next, err = openat(fd, e, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
			}
		}
		unix.Close(fd)
		if err != nil {
			return -1, pathErr("open", base, elems, i+1, err)
		}
		fd = next
	}
	return fd, nil
}

// makeLast makes the last of elems in parent, the directory of the
// others, open, with mode, and opens it as walk does; parent is closed.
func makeLast(parent int, base string, elems []string, mode uint32) (int, error) {
	defer unix.Close(parent)
	name := elems[len(elems)-1]
	err := mkdiratMode(parent, name, mode)
	if err != nil && err != unix.EEXIST {
		return -1, pathErr("open", base, elems, len(elems), err)
	}
	fd, err := openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return -1, pathErr("open", base, elems, len(elems), err)
	}
	return fd, nil
}

// pathErr is err on the first n elems of a path inside base, with a link
// (ELOOP from O_NOFOLLOW; ENOTDIR from O_DIRECTORY may be a link too, which
// the caller cannot tell apart) named as ErrLink.
func pathErr(op, base string, elems []string, n int, err error) error {
	p := filepath.Join(append([]string{base}, elems[:n]...)...)
	if err == unix.ELOOP || err == unix.EMLINK {
		err = ErrLink
	} else if err == unix.ENOTDIR {
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil {
			if st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = ErrLink
			} else if kerr := notRegular(uint32(st.Mode), "a directory"); kerr != nil {
				err = kerr // a FIFO, a file where a directory is meant
			}
		}
	}
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// absPath is path inside base as an absolute path, for messages.
func absPath(base, path string) (string, error) {
	if filepath.IsAbs(path) {
		return filepath.Clean(path), nil
	}
	return filepath.Join(base, path), nil
}

func openat(dir int, name string, flag int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, flag|unix.O_CLOEXEC, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func renameat(od int, oldname string, nd int, newname string) error {
	return ignoringEINTR(func() error { return unix.Renameat(od, oldname, nd, newname) })
}

func ignoringEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}
