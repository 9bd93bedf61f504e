package disktest

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestSmall_Fill: the disk Small gives holds what fits in it and refuses
// the next byte once Fill has filled it; room comes back when the filler
// goes.
func TestSmall_Fill(t *testing.T) {
	disk := Small(t, 64<<10)
	filler := filepath.Join(disk, "filler")
	Fill(t, filler)
	err := os.WriteFile(filepath.Join(disk, "more"), []byte("x"), 0o600)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a write on the filled disk: got %v, want ENOSPC", err)
	}
	fi, err := os.Stat(filler)
	if err != nil {
		t.Fatal(err)
	}
	if got, max := fi.Size(), int64(64<<10); got == 0 || got > max {
		t.Errorf("filler holds %d bytes, want between 1 and %d", got, max)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(disk, "more"), []byte("x"), 0o600); err != nil {
		t.Errorf("a write once the filler is gone: %v", err)
	}
}
