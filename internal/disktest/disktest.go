// Package disktest gives a test a small file system of its own, to fill:
// a tmpfs mounted for the test and unmounted when it ends; and a test
// binary a runtime directory of its own (RunWithRuntimeDir). Mounting needs
// root; without it, or where the mount fails, the test is skipped, saying
// why; elsewhere than on Linux it is always skipped. Imported by tests only.
package disktest

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Small mounts a tmpfs of size bytes at a new directory and returns it;
// it is unmounted when the test ends.
func Small(t testing.TB, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: mounting a small file system needs root")
	}
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	unmount, err := mountTmpfs(dir, size)
	if err != nil {
		t.Skipf("skipping: cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := unmount(); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// Fill writes the new file path until its file system has no room left,
// the last pages too.
func Fill(t testing.TB, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for _, n := range []int{len(chunk), 4096, 512, 1} {
		for {
			if _, err := f.Write(chunk[:n]); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("fill %s: %v", path, err)
				}
				break
			}
		}
	}
}
