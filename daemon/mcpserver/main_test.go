package mcpserver

import (
	"os"
	"testing"

	"github.com/taskd/taskd/internal/disktest"
)

// TestMain gives the tests a runtime directory of their own: the results
// their agents' attempts keep there (package held) stay out of the user's.
func TestMain(m *testing.M) { os.Exit(disktest.RunWithRuntimeDir(m)) }
