package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/internal/disktest"
)

// TestMain lets a test run this binary as taskd itself: with
// TASKD_TEST_MAIN=1 in its environment, the test binary is main (tests
// that need a real process, such as the foreground daemon's log).
func TestMain(m *testing.M) {
	if os.Getenv("TASKD_TEST_MAIN") == "1" {
		main()
		return
	}
	// A daemon run inside this binary does not become the reaper of
	// its descendants: the tests start git and sh without package proc.
	becomeReaper = func(*slog.Logger) error { return nil }
	code := disktest.RunWithRuntimeDir(m)
	if builtTaskd.bin != "" {
		os.RemoveAll(filepath.Dir(builtTaskd.bin)) // the binary the terminal tests built
	}
	os.Exit(code)
}
