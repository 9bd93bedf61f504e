//go:build !linux

package taskfile

import (
	"errors"
	"os"
)

// renameNoReplace is not available here: lock directories are made and
// removed.
func renameNoReplace(olddir int, oldpath string, newdir int, newpath string) error {
	return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: errors.ErrUnsupported}
}
