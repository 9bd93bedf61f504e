//go:build !linux

package taskfile

import (
	"errors"
	"io/fs"
	"time"
)

// exchange is not available here: a file is replaced by a rename.
func exchange(oldpath, newpath string) error { return errors.ErrUnsupported }

// lastChange is fi's modification time, where its change time is not
// read.
func lastChange(fi fs.FileInfo) time.Time { return fi.ModTime() }
