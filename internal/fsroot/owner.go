package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// Kinds of unsafe directories and files. An *UnsafeError wraps ErrUnsafe
// and exactly one of ErrWritable, ErrNotOwned and ErrLink.
var (
	ErrUnsafe   = errors.New("not safe to serve")
	ErrWritable = errors.New("writable by other users")
	ErrNotOwned = errors.New("owned by another user")
)

// An UnsafeError says why a directory or file is not served: what is
// wrong with it, and the command that fixes it.
type UnsafeError struct {
	Path    string
	Problem string // what is wrong, without the path
	Why     string // why it matters
	Fix     string // a command that fixes it
	Kind    error  // ErrWritable, ErrNotOwned, ErrLink or ErrNotRegular
}

func (e *UnsafeError) Error() string {
	return fmt.Sprintf("%s is %s: %s; fix it with: %s", e.Path, e.Problem, e.Why, e.Fix)
}

func (e *UnsafeError) Unwrap() []error { return []error{ErrUnsafe, e.Kind} }

// CheckPrivate returns nil when the directory or file at path (followed if
// a link: the root may be one) belongs to the process's effective user and
// cannot be written by group or others. Otherwise it returns an
// *UnsafeError, or the error of the stat.
func CheckPrivate(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := CheckOwner(path, fi); err != nil {
		return err
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return &UnsafeError{Path: path, Kind: ErrWritable,
			Problem: fmt.Sprintf("%s (mode %s)", ErrWritable, fi.Mode().Perm()),
			Why:     "anyone who can write there can make taskd run commands as you",
			Fix:     "chmod go-w " + path + " (or run with --insecure)"}
	}
	return nil
}

// CheckOwner returns an *UnsafeError wrapping ErrNotOwned when fi, the
// stat of path, names a file of another user than the process's effective
// user.
func CheckOwner(path string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return &UnsafeError{Path: path, Kind: ErrNotOwned,
			Problem: fmt.Sprintf("%s (uid %d; taskd runs as uid %d)", ErrNotOwned, st.Uid, uid),
			Why:     "its owner could make taskd run commands as you",
			Fix:     fmt.Sprintf("chown %d %s as root, or run taskd as its owner (or run with --insecure)", uid, path)}
	}
	return nil
}

// Owned reports whether the stat fi belongs to the process's effective
// user.
func Owned(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Geteuid()
}
