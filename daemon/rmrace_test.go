package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/waitfor"
	"github.com/taskd/taskd/taskfile"
)

// TestRemoved_DuringTheStartMark: a person removes, with a plain rm (no
// lock), the file of a task whose agent runs, in the moment the daemon
// writes that task's running mark — after the write found the file under
// the locks as it expected, before its new contents take the file's
// place. The file stays removed and the daemon stops the agent. (A write
// that renamed its contents into place created the file again: the task
// lived on, its agent running.) The task is claimed ahead of its slot,
// so that the mark is a write of its own once its agent runs.
func TestRemoved_DuringTheStartMark(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) { fc.Concurrency = 1 })
	wait, release := gate(t)
	h.drop("l", "1", execTask("holds the slot", wait))
	h.waitState("l", "1", task.Running, 20*time.Second)
	h.drop("l", "2", execTask("runs on", "exec sleep 600"))
	h.waitPrepared("l", "2")
	h.waitState("l", "2", task.Starting, 10*time.Second)

	file := filepath.Join(h.listDir("l"), "2.json")
	cmdJSON := filepath.Join(h.runDir("l", "2"), "cmd.json")
	var once sync.Once
	removed := make(chan int) // the agent's process group, once its file is removed
	defer taskfile.BeforeReplace(h.listDir("l"), func(id string) {
		if id != "2" {
			return
		}
		// The first write of task 2 since its claim: the running mark,
		// made once its agent started (recorded in cmd.json).
		once.Do(func() {
			pid := 0
			waitfor.Within(30*time.Second, func() bool { pid = recordedPID(cmdJSON); return pid > 0 })
			if err := os.Remove(file); err != nil {
				t.Errorf("rm %s: %v", file, err)
			}
			removed <- pid
		})
	})()
	release()
	var pid int
	select {
	case pid = <-removed:
	case <-time.After(60 * time.Second):
		t.Fatalf("task 2's running mark was never written\ndaemon log:\n%s", h.logs)
	}
	if pid <= 0 {
		t.Fatalf("task 2's agent did not start: cmd.json records no process group\ndaemon log:\n%s", h.logs)
	}
	h.waitFor("the agent of the removed task to be stopped", 20*time.Second, func() bool {
		return errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH)
	})
	h.waitFor("the result of the stopped agent", 20*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(h.runDir("l", "2"), "result.json"))
		return err == nil
	})
	if data, err := os.ReadFile(file); err == nil {
		t.Errorf("the removed task file is back:\n%s", data)
	}
}

// TestRemoved_DuringTheClaim: a person removes, with a plain rm, the file
// of a task in the moment the daemon writes its claim, after the write
// found the file as it expected under the locks: no agent of the task
// starts, the file stays removed, the slot goes to the next task, and the
// task is not shown held for the write that found its file gone. (A
// claim that renamed its contents into place created the file again, and
// the task a person deleted ran.)
func TestRemoved_DuringTheClaim(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) { fc.Concurrency = 1 })
	file := filepath.Join(h.listDir("l"), "1.json")
	var once sync.Once
	removed := make(chan struct{})
	defer taskfile.BeforeReplace(h.listDir("l"), func(id string) {
		if id == "1" {
			once.Do(func() { // the claim, the first write of task 1
				if err := os.Remove(file); err != nil {
					t.Errorf("rm %s: %v", file, err)
				}
				close(removed)
			})
		}
	})()
	started := filepath.Join(t.TempDir(), "started")
	h.drop("l", "1", execTask("removed as it is claimed", "touch "+started+"; exec sleep 600"))
	select {
	case <-removed:
	case <-time.After(60 * time.Second):
		t.Fatalf("task 1 was never claimed\ndaemon log:\n%s", h.logs)
	}
	// The only slot goes to task 2 once task 1's job has given it up.
	h.drop("l", "2", execTask("next", "true"))
	h.waitState("l", "2", task.Succeeded, 20*time.Second)
	if _, err := os.Stat(started); err == nil {
		t.Error("the agent of the removed task started")
	}
	for _, held := range daemon.HeldTasks(h.root) {
		if held.List == "l" && held.ID == "1" {
			t.Errorf("the removed task is shown held: %s", held.Reason)
		}
	}
	if data, err := os.ReadFile(file); err == nil {
		t.Errorf("the removed task file is back:\n%s", data)
	}
}

// TestCancelledOrRemoved_AsItsAgentStarts: taskd cancel, or taskd rm
// --force, of a task whose attempt is between its claim and its agent's
// start — the command waits for the locks the claim's write holds, and
// writes the moment it is done — leaves no agent of the task running,
// whichever comes first: the command's write or the agent's start. A
// cancelled task ends cancelled; a removed one stays removed.
func TestCancelledOrRemoved_AsItsAgentStarts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		act  func(ctx context.Context, dir *taskfile.Dir) error
	}{
		{"cancel", func(ctx context.Context, dir *taskfile.Dir) error {
			_, err := control.CancelTask(ctx, dir, "1")
			return err
		}},
		{"rm --force", func(ctx context.Context, dir *taskfile.Dir) error {
			_, err := control.Remove(ctx, dir, "1", true)
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) { fc.Concurrency = 1 })
			dir := mustOpen(t, h.listDir("l"))
			var once sync.Once
			acted := make(chan error, 1)
			defer taskfile.BeforeReplace(h.listDir("l"), func(id string) {
				if id == "1" {
					once.Do(func() { // the claim: the command waits for its locks
						go func() { acted <- tt.act(context.Background(), dir) }()
					})
				}
			})()
			pidFile := filepath.Join(t.TempDir(), "pid")
			h.drop("l", "1", execTask("stopped as it starts", "echo $$ > "+pidFile+".new && mv "+pidFile+".new "+pidFile+"; exec sleep 600"))
			select {
			case err := <-acted:
				if err != nil {
					t.Fatalf("%s: %v", tt.name, err)
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("task 1 was never claimed\ndaemon log:\n%s", h.logs)
			}
			if tt.name == "cancel" {
				h.waitState("l", "1", task.Cancelled, 20*time.Second)
			}
			// The only slot goes to task 2 once task 1's agent, if it
			// started, has exited.
			h.drop("l", "2", execTask("next", "true"))
			h.waitState("l", "2", task.Succeeded, 20*time.Second)
			if agentRuns(pidFile) {
				t.Error("the agent of task 1 runs on")
			}
			if tt.name != "cancel" {
				if data, err := os.ReadFile(filepath.Join(h.listDir("l"), "1.json")); err == nil {
					t.Errorf("the removed task file is back:\n%s", data)
				}
			}
		})
	}
}

// agentRuns reports whether the agent whose shell wrote its pid to
// pidFile (whole, by a rename) still runs; false if it never wrote it.
func agentRuns(pidFile string) bool {
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return false
	}
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// recordedPID is the process group cmd.json at path records, 0 if none.
func recordedPID(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var rec struct {
		PID int `json:"pid"`
	}
	if json.Unmarshal(data, &rec) != nil {
		return 0
	}
	return rec.PID
}
