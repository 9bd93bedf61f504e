package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/disktest"
)

// TestRemoved_KeptResultGoes: the agent of a task ends on a full disk, so
// that its result is kept in the runtime directory and its end is held;
// then a person removes the task's file with a plain rm — while the
// daemon runs, or while it is down — or the whole list while it is down.
// The result kept for the task goes (once the daemon has seen the
// removal, or once it starts again), and a daemon started again, with
// room on the disk, brings nothing of the task back: no file, no kept
// result, no agent.
func TestRemoved_KeptResultGoes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		down, whole bool
	}{
		{"while the daemon runs", false, false},
		{"while the daemon is down", true, false},
		{"the whole list while the daemon is down", true, true},
	} {
		down := tt.down
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, disk, root, marks := endOnAFullDisk(t, "its result is kept")
			list := filepath.Join(root, "l")
			h.waitFor("the end of the attempt to be held", 60*time.Second, func() bool {
				return strings.Contains(statusJSON(t, root, "l")["1"].Held, "the end of attempt 1 is not recorded yet")
			})
			runDir := filepath.Join(list, ".taskd", "runs", "1", "1")
			kept, err := agent.KeptResult(runDir)
			if err != nil {
				t.Fatal(err)
			}
			if !fileExists(kept) {
				t.Fatalf("the result is not kept at %s", kept)
			}
			file := filepath.Join(list, "1.json")
			if down {
				h.p.kill(t)
			}
			removed := file
			gone := filepath.Dir(filepath.Dir(kept)) // the task's folder of kept results
			if tt.whole {
				removed, gone = list, filepath.Dir(gone) // and the list's
			}
			if err := os.RemoveAll(removed); err != nil {
				t.Fatal(err)
			}
			if down {
				h.restartProc(1)
			}
			h.waitFor("the results kept for the removed task to go", 30*time.Second, func() bool {
				_, err := os.Lstat(gone)
				return os.IsNotExist(err)
			})
			if err := os.MkdirAll(list, 0o700); err != nil { // the list made again, if it went
				t.Fatal(err)
			}

			// Room again, and a daemon started again: nothing of task 1
			// comes back, and the list works on.
			h.stopProc()
			if err := os.Remove(filepath.Join(disk, "filler")); err != nil {
				t.Fatal(err)
			}
			h.restartProc(1)
			h.drop("l", "2", execTask("next", "true"))
			h.waitState("l", "2", task.Succeeded, 30*time.Second)
			if data, err := os.ReadFile(file); err == nil {
				t.Errorf("the removed task file is back:\n%s", data)
			}
			if fileExists(kept) {
				t.Errorf("a result is kept for the removed task again")
			}
			if data, _ := os.ReadFile(filepath.Join(marks, "ran")); string(data) != "ran\n" {
				t.Errorf("the removed task's agent ran %d times, want once", strings.Count(string(data), "ran"))
			}
			h.stopProc()
		})
	}
}

// endOnAFullDisk starts a daemon process on a small disk of its own whose
// task 1 of list l runs an agent (marking marks/ran) that ends only once
// the disk has been filled (disk/filler): its end cannot be recorded.
func endOnAFullDisk(t *testing.T, subject string) (h *procHarness, disk, root, marks string) {
	t.Helper()
	disk = disktest.Small(t, 4<<20)
	root = filepath.Join(disk, "tasks")
	if err := os.MkdirAll(filepath.Join(root, "l"), 0o700); err != nil {
		t.Fatal(err)
	}
	marks, gate := t.TempDir(), t.TempDir() // on another file system
	h = startDaemonProcHarness(t, root, 1)
	h.drop("l", "1", execTask(subject, "echo ran >> "+marks+"/ran; while [ ! -e "+gate+"/go ]; do sleep 0.02; done"))
	h.waitFor("the agent to run", 30*time.Second, func() bool { return fileExists(filepath.Join(marks, "ran")) })
	disktest.Fill(t, filepath.Join(disk, "filler"))
	if err := os.WriteFile(filepath.Join(gate, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return h, disk, root, marks
}
