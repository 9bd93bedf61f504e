package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"
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
	// The daemon closed its lock file. A process another test of this
	// binary starts at that moment holds a copy of every descriptor from
	// its fork until its exec closes them (close-on-exec): the lock may
	// outlive the daemon by that long, and no longer.
	var pid2 int
	var held2 bool
	var err2 error
	if !waitUntilOrTimeout(10*time.Second, func() bool {
		held2, pid2, err2 = daemon.LockHolder(h.root)
		return !held2 && pid2 == 0 && err2 == nil
	}) {
		t.Errorf("LockHolder(stopped daemon) = %v, %d, %v; want false, 0, nil", held2, pid2, err2)
	}
	h.start() // the lock is free: a new daemon takes it (stopped by the harness)
}

// TestLockRoot_WaitsOutACheck: a taskd command asking whether a daemon
// runs holds the root's lock, shared, for an instant (LockHolder); a
// daemon starting in that instant (here: the shared lock is held for 50
// ms) waits it out and starts, rather than taking it for another daemon.
func TestLockRoot_WaitsOutACheck(t *testing.T) {
	t.Parallel()
	root := newRoot(t, "l")
	path := daemon.LockFile(root)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	check := flock.New(path, flock.SetFlag(os.O_RDONLY))
	if ok, err := check.TryRLock(); !ok || err != nil {
		t.Fatalf("take the shared lock: %v, %v", ok, err)
	}
	p := startDaemonProc(t, root, 1)
	time.AfterFunc(50*time.Millisecond, func() { check.Unlock() })
	h := &harness{t: t, root: root, logs: p.log}
	h.waitFor("the daemon to start", 10*time.Second, func() bool {
		if strings.Contains(p.log.String(), "already running") {
			t.Fatalf("the daemon did not start: %s", p.log)
		}
		return strings.Contains(p.log.String(), "taskd started")
	})
	p.term(t)
}
