package fsroot

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// The umask. A directory made here is chmodded to 0700 after mkdir only
// when the process's umask may have removed one of the owner's bits
// (0277 removes write). A process reads its umask without changing it
// only from /proc/self/status ("Umask:", Linux 4.7); setting it to read
// it back would race with every file another goroutine creates. It is
// read once: a process that changes its umask afterwards does so with
// SetUmask, which keeps what this package knows of it true. Where it
// cannot be read, every directory made is chmodded, as before.

// umaskKnown is the umask this package knows, or -1: not known (every
// directory made is chmodded). umaskRead reads it, the first time.
var (
	umaskKnown atomic.Int32
	umaskRead  sync.Once
)

// readUmask returns the umask in /proc/self/status, or -1.
func readUmask() int32 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for line := range bytes.Lines(data) {
		if v, ok := bytes.CutPrefix(line, []byte("Umask:")); ok {
			m, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 32)
			if err != nil {
				return -1
			}
			return int32(m)
		}
	}
	return -1
}

// ownerBitsKept reports whether the process's umask, as known, leaves the
// owner's bits of what is made: then no chmod after mkdir is needed.
func ownerBitsKept() bool {
	umaskRead.Do(func() { umaskKnown.Store(readUmask()) })
	m := umaskKnown.Load()
	return m >= 0 && m&0o700 == 0
}

// SetUmask sets the process's umask to mask, as syscall.Umask does, and
// returns the one before; this package then knows it. A process that
// changes its umask while it uses this package does so through it.
func SetUmask(mask int) (old int) {
	umaskRead.Do(func() {}) // the value stored now is the one that counts
	umaskKnown.Store(-1)    // unknown while it changes: chmod
	old = unix.Umask(mask)
	umaskKnown.Store(int32(mask & 0o777))
	return old
}
