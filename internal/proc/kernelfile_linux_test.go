package proc

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestReadKernelFile: a file the kernel makes up is read whole, however
// long (/proc/self/maps of this test binary is longer than the first
// buffer); a missing one is fs.ErrNotExist.
func TestReadKernelFile(t *testing.T) {
	stat, err := ReadKernelFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa(os.Getpid()) + " ("; !strings.HasPrefix(string(stat), want) {
		t.Errorf("/proc/self/stat is %q, want it to start with %q", stat, want)
	}
	got, err := ReadKernelFile("/proc/self/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile("/proc/self/cmdline")
	if !bytes.Equal(got, want) {
		t.Errorf("/proc/self/cmdline: got %q, want %q", got, want)
	}
	maps, err := ReadKernelFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	if len(maps) <= 512 || !bytes.HasSuffix(maps, []byte("\n")) {
		t.Errorf("/proc/self/maps: %d bytes, want more than 512 ending with a newline", len(maps))
	}
	if _, err := ReadKernelFile("/proc/self/no-such-file"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: err %v, want fs.ErrNotExist", err)
	}
}
