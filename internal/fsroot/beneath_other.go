//go:build !linux

package fsroot

import "errors"

// openBeneath has no one-call form here: the caller walks.
func openBeneath(dir int, elems []string) (int, error) {
	return -1, errors.New("not supported")
}
