package fsroot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Special files. taskd never waits on a file: opened for reading, a FIFO
// waits for a writer (for writing, for a reader), and a device may wait
// for anything. So every file taskd opens — inside a base (OpenFD,
// ReadFile), and elsewhere (OpenRegular, ReadRegular: the configuration,
// taskd's state, a file named on the command line) — is looked at first
// without being opened, then opened with O_NONBLOCK and checked with
// fstat to be a regular file before a byte is read or written; a
// directory is opened with O_DIRECTORY (OpenDirectory, ReadDirectory).
// Anything else is refused with an error wrapping ErrNotRegular that says
// what it is.

// ErrNotRegular is wrapped by the error for a file taskd would read or
// write that is not a regular file (a FIFO, a socket, a device), or a
// directory it would read that is not a directory.
var ErrNotRegular = errors.New("not a regular file")

// A KindError says what a file taskd refused is, and what it wanted.
type KindError struct {
	Kind string // "a FIFO (named pipe)", "a socket", …
	Want string // "a regular file" or "a directory"
}

func (e *KindError) Error() string {
	switch e.Kind {
	case "a regular file", "a directory", "a symbolic link":
		return e.Kind + ", not " + e.Want
	}
	return e.Kind + ", not " + e.Want + ": taskd does not read or write it, so that nothing waits on it"
}

func (e *KindError) Unwrap() error { return ErrNotRegular }

// ModeType is the fs.FileMode type of a stat mode (its S_IFMT bits), as
// os.Stat reports it.
func ModeType(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}

// KindOf names the type of a file of mode for a person: "a FIFO (named
// pipe)", "a socket", "a directory", …
func KindOf(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	case mode.IsDir():
		return "a directory"
	case mode.IsRegular():
		return "a regular file"
	}
	return "a file of an unknown kind"
}

// notRegular returns the error for a file of mode that is not what want
// says ("a regular file", "a directory"), or nil if it is.
func notRegular(mode uint32, want string) error {
	is := mode & unix.S_IFMT
	if want == "a directory" && is == unix.S_IFDIR || want == "a regular file" && is == unix.S_IFREG {
		return nil
	}
	return &KindError{Kind: KindOf(ModeType(mode)), Want: want}
}

// checkRegular checks that the file open as fd, opened with flag and
// O_NONBLOCK, is a regular file, and clears O_NONBLOCK, which a regular
// file does not need, once it is. (F_SETFL changes only the status flags
// among flag: no F_GETFL is needed to keep the others.)
func checkRegular(fd, flag int) error {
	var st unix.Stat_t
	return checkRegularStat(fd, flag, &st)
}

// checkRegularStat is checkRegular leaving the open file's status in st.
func checkRegularStat(fd, flag int, st *unix.Stat_t) error {
	if err := unix.Fstat(fd, st); err != nil {
		return err
	}
	if err := notRegular(uint32(st.Mode), "a regular file"); err != nil {
		return err
	}
	unix.FcntlInt(uintptr(fd), unix.F_SETFL, flag&^unix.O_NONBLOCK)
	return nil
}

// OpenRegular opens the file at path as os.OpenFile does, without ever
// waiting on it: what is there is looked at first (following links as
// the open does, unless flag has O_NOFOLLOW), then opened with
// O_NONBLOCK and checked again on the open file. Anything but a regular
// file is refused with an error wrapping ErrNotRegular.
func OpenRegular(path string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := OpenRegularFD(path, flag, perm)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// OpenRegularFD is OpenRegular returning the bare descriptor
// (close-on-exec): for a file only locked, or read or written whole,
// without the system calls of registering an *os.File with the runtime.
func OpenRegularFD(path string, flag int, perm os.FileMode) (int, error) {
	var st unix.Stat_t
	stat := unix.Stat
	if flag&unix.O_NOFOLLOW != 0 {
		stat = unix.Lstat
	}
	if err := stat(path, &st); err == nil {
		if err := notRegular(uint32(st.Mode), "a regular file"); err != nil && !(st.Mode&unix.S_IFMT == unix.S_IFLNK && flag&unix.O_NOFOLLOW != 0) {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	} else if err == unix.ENOENT && flag&unix.O_CREAT == 0 {
		// Nothing there and nothing to make: the open would say the same
		// (a file looked for that is mostly absent costs one call).
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	fd, err := openat(unix.AT_FDCWD, path, flag|unix.O_NONBLOCK, uint32(perm.Perm()))
	if err == unix.ENXIO {
		// A FIFO without a reader, or a socket, put there since.
		if unix.Stat(path, &st) == nil {
			err = notRegular(uint32(st.Mode), "a regular file")
		}
	}
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if err := checkRegular(fd, flag); err != nil {
		unix.Close(fd)
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}

// ReadRegular reads the file at path as os.ReadFile does, refusing what is
// not a regular file (OpenRegular).
func ReadRegular(path string) ([]byte, error) {
	f, err := OpenRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// OpenDirectory opens the directory at path for reading its entries,
// refusing (without waiting) anything that is not a directory.
func OpenDirectory(path string) (*os.File, error) {
	fd, err := OpenDirectoryFD(path)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// OpenDirectoryFD is OpenDirectory returning the bare descriptor
// (close-on-exec), for a caller that only fsyncs it or uses it with the
// *at system calls.
func OpenDirectoryFD(path string) (int, error) {
	fd, err := openat(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK, 0)
	if err == unix.ENOTDIR {
		var st unix.Stat_t
		if unix.Stat(path, &st) == nil {
			err = notRegular(uint32(st.Mode), "a directory")
		}
	}
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}

// ReadDirectory returns the entries of the directory at path sorted by
// name, as os.ReadDir does, refusing what is not a directory.
func ReadDirectory(path string) ([]fs.DirEntry, error) {
	f, err := OpenDirectory(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// Flock takes a flock(2) on f, exclusive or shared, trying again every
// millisecond or two until ctx is done (then ctx's error). Closing f
// releases it.
func Flock(ctx context.Context, f *os.File, exclusive bool) error {
	return FlockFD(ctx, int(f.Fd()), f.Name(), exclusive)
}

// FlockFD is Flock on the descriptor fd of the file name.
func FlockFD(ctx context.Context, fd int, name string, exclusive bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	var t *time.Ticker
	for {
		err := unix.Flock(fd, how|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if err != unix.EWOULDBLOCK && err != unix.EINTR {
			return &fs.PathError{Op: "flock", Path: name, Err: err}
		}
		if t == nil {
			t = time.NewTicker(time.Millisecond)
			defer t.Stop()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// LockFile takes the exclusive flock of the lock file at path, making
// the file if it is missing, and waits for it until ctx is done; closing
// the file it returns releases the lock. Anything but a regular file in
// its place is refused, saying to remove it: a link would have the lock
// made, or taken, somewhere else.
func LockFile(ctx context.Context, path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: remove it (taskd makes its own)", path)
	}
	lock, err := OpenRegular(path, os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := Flock(ctx, lock, true); err != nil {
		lock.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return lock, nil
}
