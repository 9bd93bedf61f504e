package remote_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
)

// Ensure one coordinator per prefix: a second coordinator (another root,
// its own configuration with the same prefix) started while the first
// runs stops at once with status 1 and an error that names the first —
// its root, host and pid — and the first goes on completing tasks. Once
// the first is killed, a coordinator on the other root takes the prefix
// over when the lock has gone unrenewed, and completes its tasks.
func TestRemote_OneCoordinatorPerPrefix(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	c.worker("w1", "--profiles", "exec")
	c.drop("l", "1", execTask("true", t.TempDir(), nil))
	c.waitState("l", []string{"1"}, task.Succeeded, time.Minute)

	root2 := filepath.Join(c.dir, "tasks2")
	if err := os.MkdirAll(filepath.Join(root2, "m"), 0o700); err != nil {
		t.Fatal(err)
	}
	second := exec.Command(taskdBinary(t), "run", "--root", root2, "--config", c.config)
	second.Env = append(os.Environ(), "HOME="+filepath.Join(c.dir, "home"), "XDG_CONFIG_HOME="+filepath.Join(c.dir, "config"), "TASKD_ROOT=")
	done := make(chan struct{})
	var out []byte
	go func() { out, _ = second.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(40 * time.Second):
		second.Process.Kill()
		<-done
		t.Fatalf("the second coordinator still runs:\n%s", out)
	}
	if code := second.ProcessState.ExitCode(); code != 1 {
		t.Errorf("the second coordinator exited with %d, want 1:\n%s", code, out)
	}
	pid := c.coord.cmd.Process.Pid
	for _, want := range []string{"another coordinator uses this nats.prefix", c.root, "(pid " + itoa(pid) + ")", `prefix "taskd"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the second coordinator's error does not say %q:\n%s", want, out)
		}
	}
	c.drop("l", "2", execTask("true", t.TempDir(), nil))
	c.waitState("l", []string{"2"}, task.Succeeded, time.Minute)

	// The first dies; the second takes over once the lock is stale.
	c.kill(c.coord)
	takeover := &proc{name: "coordinator of tasks2", args: []string{taskdBinary(t), "run", "--root", root2, "--config", c.config, "--log-level", "debug"}}
	c.start(takeover)
	t.Cleanup(func() { c.stopProc(takeover) })
	c.dropIn(root2, "m", "1", execTask("true", t.TempDir(), nil))
	c.waitFor("the other root's coordinator to take the prefix over and run a task", time.Minute, func() bool {
		return taskState(filepath.Join(root2, "m", "1.json")) == task.Succeeded
	})
}

// Ensure an attempt the coordinator claimed and could not send before it
// died (the server was away) is sent when it restarts, runs once, and is
// not recorded interrupted — nothing is blamed on the server: one of a
// usual size, kept in cmd.json, and one larger than 64 KiB, kept in
// work.json.
func TestRemote_CrashBeforeSend(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	c.worker("w1", "--profiles", "exec")
	c.drop("l", "0", execTask("true", t.TempDir(), nil))
	c.waitState("l", []string{"0"}, task.Succeeded, time.Minute)
	marks := t.TempDir()
	ran := filepath.Join(marks, "ran")
	for _, tc := range []struct {
		id   string
		pad  int  // bytes of a comment in the script
		file bool // work.json, not cmd.json, keeps it
	}{
		{"1", 0, false},
		{"2", 64 << 10, true}, // beyond the 64 KiB cmd.json keeps
	} {
		c.nats.Stop()
		script := `echo "$TASKD_TASK_ID $TASKD_ATTEMPT" >> ` + ran
		if tc.pad > 0 {
			script += "\n# " + strings.Repeat("x", tc.pad)
		}
		c.drop("l", tc.id, execTask(script, marks, nil))
		run := filepath.Join(c.listDir("l"), ".taskd", "runs", tc.id, "1")
		c.waitFor("the attempt to be claimed and written, not sent", 30*time.Second, func() bool {
			id, _ := remoteOf(run)
			return id != ""
		})
		_, err := os.Stat(filepath.Join(run, "work.json"))
		if got := err == nil; got != tc.file {
			t.Errorf("task %s: work.json written = %v, want %v", tc.id, got, tc.file)
		}
		if got := hasInlineWork(run); got == tc.file {
			t.Errorf("task %s: cmd.json keeps the attempt = %v, want %v", tc.id, got, !tc.file)
		}
		c.kill(c.coord)
		c.nats.Restart()
		c.restart(c.coord)
		c.waitState("l", []string{tc.id}, task.Succeeded, time.Minute)
		if n, _ := c.read("l", tc.id).Metadata.Object("taskd").Int("attempt"); n != 1 {
			t.Errorf("task %s took %d attempts, want 1", tc.id, n)
		}
	}
	if n := checkRanOnce(t, ran); n != 2 {
		t.Errorf("%d attempts ran, want 2", n)
	}
	for _, e := range c.events("l") {
		if e.Type == eventlog.TaskInterrupted {
			t.Errorf("attempt %s/%d was recorded interrupted: %v", e.Task, e.Attempt, e.Data["error"])
		}
	}
}

// hasInlineWork reports whether run's cmd.json keeps the signed attempt.
func hasInlineWork(run string) bool {
	data, _ := os.ReadFile(filepath.Join(run, "cmd.json"))
	var cmd struct {
		Remote struct {
			Work struct {
				Data []byte `json:"data"`
			} `json:"work"`
		} `json:"remote"`
	}
	return json.Unmarshal(data, &cmd) == nil && len(cmd.Remote.Work.Data) > 0
}

// Ensure an attempt claimed ahead of its slot, and sent to a worker while
// its task still reads starting (the running mark comes with the job's
// next write, as for a local agent), is followed by a coordinator killed
// then and started again: its cmd.json says it passed its gate (entered),
// and the restart does not take the claim back and run it a second time.
func TestRemote_KilledWhileStartingFollowsTheAttempt(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, map[string]any{"concurrency": 1})
	c.worker("w1", "--profiles", "exec")
	marks := t.TempDir()
	ran, release := filepath.Join(marks, "ran"), filepath.Join(marks, "release")
	c.drop("l", "1", execTask(`while [ ! -e `+release+` ]; do sleep 0.05; done`, marks, nil))
	c.waitState("l", []string{"1"}, task.Running, time.Minute)
	c.drop("l", "2", execTask(`echo "$TASKD_TASK_ID $TASKD_ATTEMPT" >> `+ran, marks, nil))
	c.waitState("l", []string{"2"}, task.Starting, time.Minute) // claimed ahead of the slot task 1 holds
	touch(t, release)
	cmd := filepath.Join(c.listDir("l"), ".taskd", "runs", "2", "1", "cmd.json")
	deadline := time.Now().Add(time.Minute)
	for !entered(cmd) {
		if time.Now().After(deadline) {
			t.Fatal("task 2's attempt never passed its gate")
		}
		time.Sleep(time.Millisecond) // polled: the kill must land before the running mark
	}
	c.kill(c.coord)
	state := taskState(filepath.Join(c.listDir("l"), "2.json"))
	t.Logf("task 2 read %s when the coordinator was killed", state)
	if state != task.Starting && state != task.Running {
		t.Fatalf("task 2 read %s when the coordinator was killed, want starting (or running)", state)
	}
	c.restart(c.coord)
	c.waitState("l", []string{"2"}, task.Succeeded, time.Minute)
	if n, _ := c.read("l", "2").Metadata.Object("taskd").Int("attempt"); n != 1 {
		t.Errorf("task 2 took %d attempts, want 1", n)
	}
	if n := checkRanOnce(t, ran); n != 1 {
		t.Errorf("%d attempts ran, want 1", n)
	}
}

// entered reports whether cmd.json at path says its attempt passed its gate.
func entered(path string) bool {
	data, _ := os.ReadFile(path)
	var cmd struct {
		Entered bool `json:"entered"`
	}
	return json.Unmarshal(data, &cmd) == nil && cmd.Entered
}
