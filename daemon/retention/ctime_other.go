//go:build !linux

package retention

import (
	"os"
	"time"
)

// statusChanged is when the file at path last changed, as far as this
// system tells without its status-change time: its modification time.
func statusChanged(path string) (at time.Time, ok bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}
