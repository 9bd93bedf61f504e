package daemon

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/taskfile"
)

// servedList returns a daemon, not running, that serves one list "l" (in a
// new root) as its loop does, for tests that drive the loop's functions
// step by step.
func servedList(t *testing.T, fc *config.FileConfig) (*Daemon, *list) {
	t.Helper()
	root := t.TempDir()
	path := filepath.Join(root, "l")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.NewConfig(root, nil, fc)
	if err != nil {
		t.Fatal(err)
	}
	d := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	dir, err := taskfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	l := newList("l", dir)
	t.Cleanup(func() { l.Events.Close() })
	d.serve(l)
	return d, l
}
