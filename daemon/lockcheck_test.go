package daemon_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/daemon"
)

// Ensure LockHolder sees a running daemon and its pid, sees none once it
// has stopped, and neither creates the lock file nor keeps the lock.
func TestLockHolder(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	if held, pid, err := daemon.LockHolder(empty); held || pid != 0 || err != nil {
		t.Errorf("LockHolder(no lock file) = %v, %d, %v; want false, 0, nil", held, pid, err)
	}
	if _, err := os.Stat(filepath.Join(empty, ".taskd.lock")); !os.IsNotExist(err) {
		t.Errorf("LockHolder created the lock file: %v", err)
	}

	h := startDaemon(t, []string{"l"})
	held, pid, err := daemon.LockHolder(h.root)
	if got, want := held, true; got != want || err != nil {
		t.Fatalf("LockHolder(running daemon) = %v, %v; want %v", got, err, want)
	}
	if got, want := pid, os.Getpid(); got != want {
		t.Errorf("LockHolder(running daemon) pid = %d, want %d", got, want)
	}
	// Asking twice must not have left a lock behind that a daemon would
	// trip over.
	if held, _, _ := daemon.LockHolder(h.root); !held {
		t.Errorf("second LockHolder: daemon not seen")
	}

	h.stop()
	if held, pid, err := daemon.LockHolder(h.root); held || pid != 0 || err != nil {
		t.Errorf("LockHolder(stopped daemon) = %v, %d, %v; want false, 0, nil", held, pid, err)
	}
	h.start() // the lock is free: a new daemon takes it (stopped by the harness)
}
