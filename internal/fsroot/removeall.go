package fsroot

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// RemoveAll removes path inside base and, if it is a directory, everything
// in it, following no link: a link on the way to path fails with ErrLink,
// and a link inside the tree is removed itself, never what it points to.
// A missing path is not an error. It returns the number of bytes the
// regular files it removed held.
func RemoveAll(base, path string) (int64, error) {
	elems, err := split(base, path)
	if err != nil {
		return 0, err
	}
	dir, err := walk(base, elems[:len(elems)-1], false)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer unix.Close(dir)
	n, err := removeAt(dir, elems[len(elems)-1], 0)
	if err != nil {
		return n, pathErr("remove", base, elems, len(elems), err)
	}
	return n, nil
}

// maxRemoveDepth bounds the recursion of removeAt: run folders are two
// levels deep; a tree deeper than this was not made by taskd.
const maxRemoveDepth = 64

// removeAt removes name in the directory open as dir, and its contents if
// it is a directory, without following links.
func removeAt(dir int, name string, depth int) (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err == unix.ENOENT {
			return 0, nil
		}
		return 0, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		err := ignoringEINTR(func() error { return unix.Unlinkat(dir, name, 0) })
		if err == unix.ENOENT {
			return 0, nil
		}
		if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return 0, err
		}
		return st.Size, nil
	}
	if depth >= maxRemoveDepth {
		return 0, unix.ELOOP
	}
	sub, err := openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return 0, err
	}
	f := os.NewFile(uintptr(sub), name)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, n := range names {
		size, err := removeAt(sub, n, depth+1)
		total += size
		if err != nil {
			return total, err
		}
	}
	err = ignoringEINTR(func() error { return unix.Unlinkat(dir, name, unix.AT_REMOVEDIR) })
	if err == unix.ENOENT {
		err = nil
	}
	return total, err
}
