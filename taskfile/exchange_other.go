//go:build !linux

package taskfile

import "errors"

// exchange is not available here: a file is replaced by a rename.
func exchange(oldpath, newpath string) error { return errors.ErrUnsupported }
