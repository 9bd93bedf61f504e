package retention

import (
	"syscall"
	"time"
)

// statusChanged is when the file at path last changed, its contents or
// its name (ctime, which a rename sets and no one can set back); ok is
// false if it cannot be looked at.
func statusChanged(path string) (at time.Time, ok bool) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return time.Time{}, false
	}
	return time.Unix(st.Ctim.Unix()), true
}
