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
// lock before it concludes another daemon holds it. A command's check
// holds it for microseconds, but on a machine whose cores are busy that
// command may wait its turn for longer while holding it: two seconds, so
// that a daemon started then does not take it for another daemon.
const lockPatience = 2 * time.Second

// lockRoot takes the daemon lock on root. The lock file records the
// holder's pid for the message another daemon prints. The kernel releases
// the lock when the process dies, however it dies; closing the returned
// file releases it too. A lock file that is not a regular file (a FIFO)
// fails at once: the daemon does not start, and says why.
func lockRoot(root string) (*os.File, error) {
	path := filepath.Join(root, daemonLockName)
	f, err := fsroot.OpenRegular(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// A taskd command asking whether a daemon runs (LockHolder) holds a
	// shared lock for microseconds: it is waited out, a daemon's is not.
	ctx, cancel := context.WithTimeout(context.Background(), lockPatience)
	err = fsroot.Flock(ctx, f, true)
	cancel()
	if errors.Is(err, context.DeadlineExceeded) {
		holder := ""
		if pid := lockPID(f); pid > 0 {
			holder = fmt.Sprintf(" (pid %d)", pid)
		}
		f.Close()
		return nil, fmt.Errorf("%w%s: %s is locked; stop that daemon first (taskd stop, or kill the pid), or use another --root", ErrAlreadyRunning, holder, path)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// Record our pid; the lock is on the inode, which truncating keeps.
	if f.Truncate(0) == nil {
		f.WriteAt(fmt.Appendf(nil, "%d\n", os.Getpid()), 0)
	}
	return f, nil
}

// lockPID is the pid the open lock file f records, or 0.
func lockPID(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	return pid
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
