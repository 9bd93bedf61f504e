package fsroot

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Modes of what this package creates, before and after any umask.
const (
	DirMode  = 0o700
	FileMode = 0o600
)

// MkdirAll makes the directory path inside base and every missing
// directory on the way (mode 0700), following no link. A directory that
// exists is left as it is.
func MkdirAll(base, path string) error {
	elems, err := split(base, path)
	if err != nil {
		return err
	}
	fd, err := walk(base, elems, true)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return nil
}

// Mkdir makes the directory path inside base (mode 0700), and the missing
// directories on the way as MkdirAll does. If path exists it fails with an
// error satisfying errors.Is(err, fs.ErrExist) when it is a directory, and
// ErrLink when it is a link.
func Mkdir(base, path string) error {
	elems, err := split(base, path)
	if err != nil {
		return err
	}
	dir, err := walk(base, elems[:len(elems)-1], true)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	name := elems[len(elems)-1]
	err = mkdirat(dir, name)
	if err == nil {
		return nil
	}
	if err == unix.EEXIST {
		var st unix.Stat_t
		if serr := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); serr == nil {
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFLNK:
				err = ErrLink
			case unix.S_IFDIR:
			default:
				err = unix.ENOTDIR
			}
		}
	}
	return pathErr("mkdir", base, elems, len(elems), err)
}

// MkdirDir makes the directory path inside base as Mkdir does, and opens
// it: the Dir of the directory this call made (made), or of the one that
// was there already. A link at path, or on the way, fails with ErrLink,
// anything else there but a directory as OpenDirFD fails; nothing is
// opened twice.
func MkdirDir(base, path string) (d *Dir, made bool, err error) {
	elems, err := split(base, path)
	if err != nil {
		return nil, false, err
	}
	dir, err := walk(base, elems[:len(elems)-1], true)
	if err != nil {
		return nil, false, err
	}
	defer unix.Close(dir)
	name := elems[len(elems)-1]
	if err := mkdirat(dir, name); err == nil {
		made = true
	} else if err != unix.EEXIST {
		return nil, false, pathErr("mkdir", base, elems, len(elems), err)
	}
	// What is opened is what was made unless it was replaced meanwhile,
	// and then a link is not followed, nor anything but a directory
	// opened.
	fd, err := openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, made, pathErr("open", base, elems, len(elems), err)
	}
	return &Dir{fd: fd, base: base, elems: elems}, made, nil
}

// mkdirat makes the directory name in dir, mode 0700: chmodded after the
// mkdir when the umask may have removed the owner's bits (umask.go).
func mkdirat(dir int, name string) error { return mkdiratMode(dir, name, DirMode) }

// mkdiratMode makes the directory name in dir with mode: DirMode whatever
// the umask, as mkdirat; any other mode less the umask, as mkdir(2).
func mkdiratMode(dir int, name string, mode uint32) error {
	err := ignoringEINTR(func() error { return unix.Mkdirat(dir, name, mode) })
	if err == nil && mode == DirMode && !ownerBitsKept() {
		unix.Fchmodat(dir, name, DirMode, 0)
	}
	return err
}

// OpenFD opens the file path inside base with flag (O_CLOEXEC and O_NOFOLLOW
// are added; a file created gets mode 0600) and returns its descriptor. The
// directories on the way must exist; with O_CREAT missing ones are made,
// as MkdirAll does. A link anywhere on the way, or at path itself, fails
// with ErrLink. Anything but a regular file (a FIFO, a socket, a device)
// is refused without being waited on (ErrNotRegular, special.go); a file
// opened for writing that has other hard links (so that a write would
// change a file elsewhere) fails too. With O_CREAT|O_EXCL the file is one
// this call makes: anything at path (a link included) fails with an error
// satisfying errors.Is(err, fs.ErrExist), and is left untouched.
func OpenFD(base, path string, flag int) (int, error) {
	elems, err := split(base, path)
	if err != nil {
		return -1, err
	}
	dir, err := walk(base, elems[:len(elems)-1], flag&os.O_CREATE != 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(dir)
	return openIn(dir, base, elems, flag)
}

// openIn is OpenFD of the last of elems in dir, the directory of the
// others, open.
func openIn(dir int, base string, elems []string, flag int) (int, error) {
	name := elems[len(elems)-1]
	if flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL {
		// A file made by this very call: a new regular file with one
		// link and nothing in it. Anything already there (a link, a
		// FIFO, a file) fails the open with EEXIST, untouched; nothing
		// is left to look at before or after.
		fd, err := openat(dir, name, flag&^os.O_TRUNC|unix.O_NOFOLLOW, FileMode)
		if err != nil {
			return -1, pathErr("open", base, elems, len(elems), err)
		}
		return fd, nil
	}
	// What is there is looked at before it is opened (a device is not
	// even opened), and the open never waits (O_NONBLOCK): a FIFO put
	// there meanwhile is refused by the check of the open file.
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT != unix.S_IFLNK {
		if err := notRegular(uint32(st.Mode), "a regular file"); err != nil {
			return -1, pathErr("open", base, elems, len(elems), err)
		}
	}
	// O_TRUNC waits for the checks below: it would empty a file with other
	// hard links before they could refuse it.
	fd, err := openat(dir, name, flag&^os.O_TRUNC|unix.O_NOFOLLOW|unix.O_NONBLOCK, FileMode)
	if err == unix.ENXIO && unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		err = notRegular(uint32(st.Mode), "a regular file") // a FIFO without a reader, a socket
	}
	if err != nil {
		return -1, pathErr("open", base, elems, len(elems), err)
	}
	if err := checkRegularStat(fd, flag&^os.O_TRUNC|unix.O_NOFOLLOW, &st); err != nil {
		unix.Close(fd)
		return -1, pathErr("open", base, elems, len(elems), err)
	}
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		// st is the open file's (checkRegularStat): its links and size.
		switch {
		case st.Nlink > 1:
			unix.Close(fd)
			return -1, pathErr("open", base, elems, len(elems), ErrHardLink)
		}
		if flag&os.O_TRUNC != 0 && st.Size > 0 {
			if err := ignoringEINTR(func() error { return unix.Ftruncate(fd, 0) }); err != nil {
				unix.Close(fd)
				return -1, pathErr("truncate", base, elems, len(elems), err)
			}
		}
	}
	return fd, nil
}

// OpenDirFD opens the directory path inside base, following no link, and
// returns its descriptor (close-on-exec) for use with the *at system calls.
// With create set, missing directories are made as MkdirAll does.
func OpenDirFD(base, path string, create bool) (int, error) {
	elems, err := split(base, path)
	if err != nil {
		return -1, err
	}
	return walk(base, elems, create)
}

// ErrHardLink is wrapped by the error for a file taskd would write that
// has other names (hard links): writing it would change a file elsewhere.
var ErrHardLink = errors.New("a file with other hard links, which taskd does not write through")

// OpenFile is OpenFD returning an *os.File.
func OpenFile(base, path string, flag int) (*os.File, error) {
	fd, err := OpenFD(base, path, flag)
	if err != nil {
		return nil, err
	}
	p, _ := absPath(base, path)
	return os.NewFile(uintptr(fd), p), nil
}

// WriteFile replaces the file path inside base with data, atomically: a
// temporary file in the same directory (mode 0600) is renamed over it, so
// a link or hard link at path is replaced, never written through. Missing
// directories are made as MkdirAll does.
func WriteFile(base, path string, data []byte) error {
	elems, err := split(base, path)
	if err != nil {
		return err
	}
	dir, err := walk(base, elems[:len(elems)-1], true)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	return writeIn(dir, base, elems, data)
}

// Shared is how WriteShared and MkdirShared make what they make: as a
// program that writes a user's project does (mkdir 0755, files 0644, less
// the umask), not privately as taskd's own files.
var Shared = struct{ Dir, File uint32 }{0o755, 0o644}

// WriteShared is WriteFile for a file of a user's own, such as a
// project's, which is made as Shared says instead of private: path is
// resolved from base following no link, its missing directories made on
// the way, and the file replaced by rename.
func WriteShared(base, path string, data []byte) error {
	elems, err := split(base, path)
	if err != nil {
		return err
	}
	dir, err := walkMaking(base, elems[:len(elems)-1], Shared.Dir)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	return writeInMode(dir, base, elems, data, Shared.File)
}

// MkdirShared is MkdirAll for a directory of a user's own, made as Shared
// says. path may be base itself, which is only opened.
func MkdirShared(base, path string) error {
	var elems []string
	if filepath.Clean(path) != filepath.Clean(base) {
		var err error
		if elems, err = split(base, path); err != nil {
			return err
		}
	}
	fd, err := walkMaking(base, elems, Shared.Dir)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return nil
}

// writeIn is WriteFile of the last of elems in dir, the directory of the
// others, open.
func writeIn(dir int, base string, elems []string, data []byte) error {
	return writeInMode(dir, base, elems, data, FileMode)
}

// writeInMode is writeIn making the file with mode (less the umask).
func writeInMode(dir int, base string, elems []string, data []byte, mode uint32) error {
	name := elems[len(elems)-1]
	var r [6]byte
	rand.Read(r[:])
	tmp := "." + name + "." + hex.EncodeToString(r[:]) + ".tmp"
	if len(tmp) > MaxName {
		tmp = "." + hex.EncodeToString(r[:]) + ".tmp"
	}
	fd, err := openat(dir, tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, mode)
	if err != nil {
		return pathErr("create", base, elems, len(elems), err)
	}
	for b := data; len(b) > 0 && err == nil; {
		var n int
		if n, err = unix.Write(fd, b); err == unix.EINTR {
			err = nil
		} else if n == 0 && err == nil {
			err = io.ErrShortWrite
		}
		b = b[max(n, 0):]
	}
	if cerr := unix.Close(fd); err == nil && cerr != unix.EINTR {
		err = cerr
	}
	if err == nil {
		err = renameat(dir, tmp, dir, name)
	}
	if err != nil {
		unix.Unlinkat(dir, tmp, 0)
		return pathErr("write", base, elems, len(elems), err)
	}
	return nil
}

// A Dir is a directory inside a base directory, opened once (following no
// link on the way, as OpenDirFD does), whose files are opened and written
// as OpenFD and WriteFile do, without walking to it again for each: for
// a run of several files in one folder. Safe for concurrent use; after
// Close its methods fail.
type Dir struct {
	mu    sync.Mutex
	fd    int
	base  string
	elems []string
}

// OpenDir opens the directory path inside base.
func OpenDir(base, path string) (*Dir, error) {
	elems, err := split(base, path)
	if err != nil {
		return nil, err
	}
	fd, err := walk(base, elems, false)
	if err != nil {
		return nil, err
	}
	return &Dir{fd: fd, base: base, elems: elems}, nil
}

// OpenFD is OpenFD of the file name in the directory (a name, not a path).
func (d *Dir) OpenFD(name string, flag int) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	elems, err := d.file(name)
	if err != nil {
		return -1, err
	}
	return openIn(d.fd, d.base, elems, flag)
}

// WriteFile is WriteFile of the file name in the directory.
func (d *Dir) WriteFile(name string, data []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	elems, err := d.file(name)
	if err != nil {
		return err
	}
	return writeIn(d.fd, d.base, elems, data)
}

// file returns the elements of the path of the file name in d.
func (d *Dir) file(name string) ([]string, error) {
	p := filepath.Join(append([]string{d.base}, d.elems...)...)
	if d.fd < 0 {
		return nil, &fs.PathError{Op: "open", Path: filepath.Join(p, name), Err: fs.ErrClosed}
	}
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return nil, &fs.PathError{Op: "open", Path: filepath.Join(p, name), Err: fs.ErrInvalid}
	}
	return append(slices.Clip(d.elems), name), nil
}

// Close closes the directory.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// ReadFile returns the contents of the file path inside base, at most max
// bytes of it (a longer file fails with an error). Links are not followed.
func ReadFile(base, path string, max int64) ([]byte, error) {
	fd, err := OpenFD(base, path, os.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = &fs.PathError{Op: "read", Path: f.Name(), Err: errors.New("larger than the limit")}
	}
	return data, err
}

// ReadDir returns the entries of the directory path inside base (or of
// base itself when path is "" or "."), sorted by name.
func ReadDir(base, path string) ([]fs.DirEntry, error) {
	var elems []string
	if path != "" && path != "." && filepath.Clean(path) != filepath.Clean(base) {
		var err error
		if elems, err = split(base, path); err != nil {
			return nil, err
		}
	}
	fd, err := walk(base, elems, false)
	if err != nil {
		return nil, err
	}
	p, _ := absPath(base, path)
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// Rename renames oldpath to newpath, both inside base; the directories of
// both must exist, and no link is followed on the way to either.
func Rename(base, oldpath, newpath string) error {
	oe, err := split(base, oldpath)
	if err != nil {
		return err
	}
	ne, err := split(base, newpath)
	if err != nil {
		return err
	}
	od, err := walk(base, oe[:len(oe)-1], false)
	if err != nil {
		return err
	}
	defer unix.Close(od)
	nd, err := walk(base, ne[:len(ne)-1], false)
	if err != nil {
		return err
	}
	defer unix.Close(nd)
	if err := renameat(od, oe[len(oe)-1], nd, ne[len(ne)-1]); err != nil {
		o, _ := absPath(base, oldpath)
		n, _ := absPath(base, newpath)
		return &os.LinkError{Op: "rename", Old: o, New: n, Err: err}
	}
	return nil
}

// Remove removes the file or empty directory path inside base. A link at
// path is removed itself; a link on the way to it fails with ErrLink.
func Remove(base, path string) error {
	elems, err := split(base, path)
	if err != nil {
		return err
	}
	dir, err := walk(base, elems[:len(elems)-1], false)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	name := elems[len(elems)-1]
	err = ignoringEINTR(func() error { return unix.Unlinkat(dir, name, 0) })
	if err == unix.EISDIR || err == unix.EPERM {
		err = ignoringEINTR(func() error { return unix.Unlinkat(dir, name, unix.AT_REMOVEDIR) })
	}
	if err != nil {
		return pathErr("remove", base, elems, len(elems), err)
	}
	return nil
}
