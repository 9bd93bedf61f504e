package taskfile

import (
	"errors"
	"fmt"
)

// Kinds of bad task files. A *BadFileError unwraps to exactly one of these,
// so callers branch with errors.Is.
var (
	ErrInvalidJSON = errors.New("not valid JSON")
	ErrNotObject   = errors.New("not a JSON object")
	ErrTooLarge    = errors.New("too large")
	ErrSymlink     = errors.New("a symbolic link")
	ErrNotRegular  = errors.New("not a regular file")
	ErrIDMismatch  = errors.New("id does not match the file name")
	ErrWrongType   = errors.New("field of the wrong type")
	ErrNotOwned    = errors.New("owned by another user")
)

// ErrLocked is returned, wrapped, when a lock could not be taken before the
// context ended.
var ErrLocked = errors.New("lock is held by another writer")

// ErrBadLock is returned, wrapped in a *fs.PathError naming the lock, when
// a task file's lock (<id>.json.lock) cannot be taken because something
// other than a lock directory is in its place (a symbolic link, a file),
// or an abandoned lock cannot be removed. Waiting would not help: a
// person must remove it.
var ErrBadLock = errors.New("not a lock directory")

// BadFileError reports a task file that taskd will not accept. The file is
// never modified; the error says what is wrong in words a user can act on.
type BadFileError struct {
	Path    string // the file
	Problem string // what is wrong, one sentence without the path
	Fix     string // what to do about it
	Err     error  // one of the Err* kinds above
}

func (e *BadFileError) Error() string {
	return fmt.Sprintf("%s: %s", e.Path, e.Problem)
}

func (e *BadFileError) Unwrap() error { return e.Err }

func badFile(path string, kind error, fix, format string, args ...any) *BadFileError {
	return &BadFileError{Path: path, Problem: fmt.Sprintf(format, args...), Fix: fix, Err: kind}
}
