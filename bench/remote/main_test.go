package remote_test

import (
	"os"
	"testing"

	"github.com/taskd/taskd/internal/disktest"
)

// TestMain gives the benchmarks a runtime directory of their own: the
// taskd processes they start keep their status files there (package held),
// out of the user's.
func TestMain(m *testing.M) { os.Exit(disktest.RunWithRuntimeDir(m)) }
