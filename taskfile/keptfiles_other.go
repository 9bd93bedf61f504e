//go:build !linux

package taskfile

import "errors"

// onlyLabel is not looked at here: files are not kept (openOnlyHere).
func onlyLabel(fd int) bool { return false }

// openOnlyHere cannot tell here: files are not kept.
func openOnlyHere(fd int) (bool, error) { return false, errors.ErrUnsupported }
