package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/taskd/taskd/internal/fsroot"
)

// ResolveRoot returns the root of task lists: flagRoot if set, else
// $TASKD_ROOT, else $CLAUDE_CONFIG_DIR/tasks, else ~/.claude/tasks. The path
// is made absolute; it is not created.
func ResolveRoot(flagRoot string, getenv func(string) string) (string, error) {
	root := flagRoot
	if root == "" {
		root = getenv("TASKD_ROOT")
	}
	if root == "" {
		if dir := getenv("CLAUDE_CONFIG_DIR"); dir != "" {
			root = filepath.Join(dir, "tasks")
		}
	}
	if root == "" {
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("no task root: give --root, or set TASKD_ROOT or HOME")
		}
		root = filepath.Join(home, ".claude", "tasks")
	}
	if rest, ok := strings.CutPrefix(root, "~/"); ok && getenv("HOME") != "" {
		root = filepath.Join(getenv("HOME"), rest)
	}
	return filepath.Abs(root)
}

// daemonLockName is the file a running daemon holds a flock on.
const daemonLockName = ".taskd.lock"

// ErrAlreadyRunning is returned by Run when another daemon holds the root.
var ErrAlreadyRunning = errors.New("another taskd is already running on this root")

// lockPatience is how long a starting daemon tries to take the root's
// lock before it concludes another daemon holds it.
const lockPatience = 200 * time.Millisecond

// lockRoot takes the daemon lock on root. The lock file records the
// holder's pid for the message another daemon prints. The kernel releases
// the lock when the process dies, however it dies.
func lockRoot(root string) (*flock.Flock, error) {
	path := filepath.Join(root, daemonLockName)
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	// A taskd command asking whether a daemon runs (LockHolder) holds a
	// shared lock for microseconds: it is waited out, a daemon's is not.
	ctx, cancel := context.WithTimeout(context.Background(), lockPatience)
	ok, err := fl.TryLockContext(ctx, time.Millisecond)
	cancel()
	if errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		holder := ""
		if data, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				holder = fmt.Sprintf(" (pid %d)", pid)
			}
		}
		return nil, fmt.Errorf("%w%s: %s is locked; stop that daemon first (taskd stop, or kill the pid), or use another --root", ErrAlreadyRunning, holder, path)
	}
	// Record our pid through the locked descriptor's path; the lock is on the
	// inode, which a truncating write keeps.
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0); err == nil {
		fmt.Fprintf(f, "%d\n", os.Getpid())
		f.Close()
	}
	return fl, nil
}

// ErrInsecure is wrapped by the error for a root or list the daemon does
// not serve because someone else could make it run commands as this user:
// it belongs to another user, other users can write to it, or its .taskd
// area holds a link (see package fsroot).
var ErrInsecure = fsroot.ErrUnsafe

// ensureRoot creates the root (mode 0700) if it is missing.
func ensureRoot(root string) error {
	fi, err := os.Stat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(root, 0o700)
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("task root %s is not a directory", root)
	}
	return nil
}
