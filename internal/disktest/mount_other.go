//go:build !linux

package disktest

import "errors"

// mountTmpfs has no tmpfs to mount here.
func mountTmpfs(string, int) (func() error, error) {
	return nil, errors.New("no tmpfs on this system")
}
