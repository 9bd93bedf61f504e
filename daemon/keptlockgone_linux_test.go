package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
)

// TestListGone_LockFileClosed: the daemon keeps each list's lock file
// open between writes; a list whose directory is removed (Claude Code
// cleans up a session's list, a person's rm -r) is dropped, and its lock
// file is closed with it. A daemon that serves list after list for months
// holds no descriptor, and no removed file, of the lists that went.
func TestListGone_LockFileClosed(t *testing.T) {
	t.Parallel()
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	h := startDaemon(t, nil)
	// openLocks counts this process's descriptors open on a lock file
	// under the root: the daemon runs in this process.
	openLocks := func() []string {
		fds, _ := os.ReadDir("/proc/self/fd")
		var open []string
		for _, e := range fds {
			target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
			if err == nil && strings.HasPrefix(target, h.root+"/") && strings.Contains(target, "/.lock") {
				open = append(open, target)
			}
		}
		return open
	}
	lists := []string{"a", "b", "c"}
	for i, l := range lists {
		if err := os.Mkdir(h.listDir(l), 0o700); err != nil {
			t.Fatal(err)
		}
		h.drop(l, "1", execTask("in "+l, "true"))
		h.waitState(l, "1", task.Succeeded, 30*time.Second)
		if got := len(openLocks()); got != 1 {
			t.Fatalf("descriptors open on list %s's lock file after its task's writes: %d, want 1 (kept open)", l, got)
		}
		h.waitFor("list "+l+" to be removed", 30*time.Second, func() bool { return os.RemoveAll(h.listDir(l)) == nil })
		h.waitFor("the daemon to drop list "+l, 30*time.Second, func() bool {
			return strings.Count(h.logs.String(), "list went away") == i+1
		})
		h.waitFor("the lock file of removed list "+l+" to be closed", 10*time.Second, func() bool {
			return len(openLocks()) == 0
		})
	}
}
