package fsroot

import (
	"syscall"
	"testing"
)

// TestReadUmask: the umask read from /proc/self/status is the process's,
// and SetUmask keeps what the package knows of it true.
func TestReadUmask(t *testing.T) {
	for _, mask := range []int{0o022, 0o277, 0} {
		old := syscall.Umask(mask) // set and restored: this test alone runs
		got := readUmask()
		syscall.Umask(old)
		if got != int32(mask) {
			t.Errorf("readUmask = %04o with umask %04o", got, mask)
		}
	}
	for _, tc := range []struct {
		mask int
		kept bool
	}{{0o022, true}, {0o077, true}, {0o277, false}, {0o400, false}, {0, true}} {
		old := SetUmask(tc.mask)
		got := ownerBitsKept()
		SetUmask(old)
		if got != tc.kept {
			t.Errorf("umask %04o: ownerBitsKept = %v, want %v", tc.mask, got, tc.kept)
		}
	}
}
