package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/held"
	"github.com/taskd/taskd/daemon/task"
)

// TestHeld_StatusFileOfAKilledDaemon: a daemon process holding a task (its
// end cannot be recorded on a full disk) publishes it in its status file;
// killed with SIGKILL, it leaves the file, and taskd status shows the task
// held no more (the file names a process that no longer serves the root).
// The next daemon for the root replaces the file with its own; stopped
// with SIGTERM, it removes it. A daemon that holds nothing removes the
// file a killed one left.
func TestHeld_StatusFileOfAKilledDaemon(t *testing.T) {
	t.Parallel()
	h, disk, root, _ := endOnAFullDisk(t, "its end is held")
	path, err := held.StatusPath(root)
	if err != nil {
		t.Fatal(err)
	}
	isHeld := func() bool { return strings.Contains(statusJSON(t, root, "l")["1"].Held, "not recorded yet") }
	h.waitFor("taskd status to show the end held", 60*time.Second, isHeld)
	if pid, tasks, err := held.Read(root); pid != h.p.cmd.Process.Pid || len(tasks) != 1 || err != nil {
		t.Fatalf("status file: pid %d, %d tasks, %v; want the daemon's pid %d and one task", pid, len(tasks), err, h.p.cmd.Process.Pid)
	}

	h.p.kill(t)
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the killed daemon's status file: %v; want it left", err)
	}
	if isHeld() {
		t.Error("taskd status shows the task held by a killed daemon")
	}
	if got := daemon.HeldTasks(root); got != nil {
		t.Errorf("HeldTasks after the daemon was killed = %v, want none", got)
	}

	h.restartProc(1) // the disk is still full: the next daemon holds the end again
	holdsItself := func() int {
		pid := h.p.cmd.Process.Pid
		h.waitFor("the daemon's own status file", 60*time.Second, func() bool {
			got, _, _ := held.Read(root)
			return got == pid && isHeld()
		})
		return pid
	}
	holdsItself()
	h.stopProc()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("the status file of a daemon stopped with SIGTERM: %v; want it removed", err)
	}

	// Killed again while it holds the end; then room, and a daemon that
	// records the end at once, holding nothing: the file left goes all the
	// same, and so does the result kept in the runtime directory.
	h.restartProc(1)
	pid := holdsItself()
	h.p.kill(t)
	if got, _, _ := held.Read(root); got != pid {
		t.Fatalf("the status file names %d, want the killed daemon %d", got, pid)
	}
	if err := os.Remove(filepath.Join(disk, "filler")); err != nil {
		t.Fatal(err)
	}
	h.restartProc(1)
	h.waitState("l", "1", task.Succeeded, 60*time.Second)
	h.waitFor("the killed daemon's status file to go", 30*time.Second, func() bool {
		_, err := os.Lstat(path)
		return os.IsNotExist(err)
	})
	h.stopProc()
}
