package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
	procs "github.com/taskd/taskd/internal/proc"
	"github.com/taskd/taskd/internal/proctest"
	"github.com/taskd/taskd/taskfile"
)

// TestRemote_EscapedProcessesDie: on a worker as on the coordinator's
// machine, an agent's processes that left its process group and session
// (setsid, a double fork) die with the attempt however it ends: cancelled
// by the coordinator, timed out, the worker stopped, the worker killed
// (then the worker started again kills them) — in a cgroup of the
// attempt's own where one can be had (a process that cleared its
// environment is found by it), else found by their environment.
func TestRemote_EscapedProcessesDie(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		if os.Getenv("TASKD_REQUIRE_TOOLS") == "1" {
			t.Fatal("setsid is not installed, and TASKD_REQUIRE_TOOLS=1")
		}
		t.Skip("skipping: setsid is not installed")
	}
	modes := map[string][]string{"environment": {"TASKD_SUPERVISION=environment"}}
	if s := procs.Supervise(); s.Mode() == procs.ByCgroup {
		modes["cgroup"] = nil
	} else {
		t.Logf("no cgroup here: only the environment's fallback is tested (%s)", s)
	}
	for mode, env := range modes {
		for _, end := range []string{"cancel", "timeout", "stop", "crash"} {
			t.Run(mode+"/"+end, func(t *testing.T) {
				t.Parallel()
				escapedOnWorker(t, mode, end, env)
			})
		}
	}
}

func escapedOnWorker(t *testing.T, mode, end string, env []string) {
	c := newCluster(t, []string{"l"}, nil)
	c.workerEnv = env
	w := c.worker("w1", "--profiles", "exec")
	m := t.TempDir()
	clear := ""
	if mode == "cgroup" {
		clear = "env -i PATH=$PATH "
	}
	script := `[ "$TASKD_ATTEMPT" = 1 ] || exit 0
setsid sh -c 'echo $$ > ` + m + `/a.tmp; mv ` + m + `/a.tmp ` + m + `/a; exec sleep 300' &
(` + clear + `setsid sh -c 'echo $$ > ` + m + `/b.tmp; mv ` + m + `/b.tmp ` + m + `/b; exec sleep 300' &)
while [ ! -e ` + m + `/a ] || [ ! -e ` + m + `/b ]; do sleep 0.01; done
sleep 300`
	extra := map[string]any{}
	if end == "timeout" {
		extra["taskd.timeout"] = "4s"
	}
	c.drop("l", "1", execTask(script, m, extra))
	c.waitFor("the escaped processes to start on the worker", 30*time.Second, func() bool {
		_, errA := os.Stat(filepath.Join(m, "a"))
		_, errB := os.Stat(filepath.Join(m, "b"))
		return errA == nil && errB == nil
	})
	a, b := pidIn(t, filepath.Join(m, "a")), pidIn(t, filepath.Join(m, "b"))
	agent, cgroup := workerAgent(t, c, "w1")
	if (cgroup != "") != (mode == "cgroup") {
		t.Fatalf("the worker's cmd.json records cgroup %q in the %s mode", cgroup, mode)
	}
	switch end {
	case "cancel":
		dir, err := taskfile.Open(c.listDir("l"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dir.Update(context.Background(), "1", func(tf *taskfile.Task) error {
			tf.Metadata.Object("taskd").Set("cancel", true)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		c.waitState("l", []string{"1"}, task.Cancelled, 30*time.Second)
	case "timeout":
		c.waitState("l", []string{"1"}, task.TimedOut, 30*time.Second)
	case "stop":
		// The first signal drains (the agent goes on); the second stops
		// what runs.
		w.cmd.Process.Signal(syscall.SIGTERM)
		c.waitFor("the worker to drain", 10*time.Second, func() bool { return strings.Contains(w.out.String(), "drain") })
		w.cmd.Process.Signal(syscall.SIGTERM)
		<-w.done
	case "crash":
		// Nothing kills them while no worker runs: once the worker is
		// reaped every signal its death sends is sent, and the agent it
		// started has died of its own (its parent-death signal); then they
		// still run, with no signal on its way to end them.
		c.kill(w)
		c.waitFor("the agent to die with its worker", 30*time.Second, func() bool { return !proctest.Running(agent) })
		if !proctest.Running(a) || !proctest.Running(b) || proctest.Doomed(a) || proctest.Doomed(b) {
			t.Fatal("the escaped processes died with the worker: nothing left to check")
		}
		c.restart(w)
	}
	c.waitFor("the escaped processes to die", 30*time.Second, func() bool { return !proctest.Running(a) && !proctest.Running(b) })
	if cgroup != "" {
		c.waitFor("the attempt's cgroup to be removed", 20*time.Second, func() bool {
			_, err := os.Stat(cgroup)
			return errors.Is(err, fs.ErrNotExist)
		})
	}
}

// workerAgent returns the agent's pid and the cgroup the cmd.json of the
// attempt running on worker name records, once it records the pid.
func workerAgent(t *testing.T, c *cluster, name string) (pid int, cgroup string) {
	t.Helper()
	var rec struct {
		PID    int    `json:"pid"`
		Cgroup string `json:"cgroup"`
	}
	c.waitFor("the worker's cmd.json to record the agent", 10*time.Second, func() bool {
		found, _ := filepath.Glob(filepath.Join(c.dir, "state-"+name, "attempts", "*", "list", ".taskd", "runs", "1", "1", "cmd.json"))
		if len(found) != 1 {
			return false
		}
		data, _ := os.ReadFile(found[0])
		return json.Unmarshal(data, &rec) == nil && rec.PID > 0
	})
	return rec.PID, rec.Cgroup
}

// pidIn reads the pid a process wrote to path.
func pidIn(t *testing.T, path string) int {
	t.Helper()
	data, _ := os.ReadFile(path)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("pid file %s: %q", path, data)
	}
	return pid
}

// TestRemote_OutputCapped: an attempt on a worker is cut by the
// coordinator's outputMaxMiB: the worker's logs and what it sends back
// keep the first and the last half MiB, the coordinator's run folder
// stays small, and the result says what was cut.
func TestRemote_OutputCapped(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, map[string]any{"outputMaxMiB": 1})
	c.worker("w1", "--profiles", "exec")
	c.drop("l", "1", execTask("yes | head -c 200000000; echo END-OF-STDOUT", t.TempDir(), nil))
	c.waitState("l", []string{"1"}, task.Succeeded, 3*time.Minute)
	runDir := filepath.Join(c.listDir("l"), ".taskd", "runs", "1", "1")
	const limit = 1 << 20
	c.waitFor("the end of stdout.log to arrive", 30*time.Second, func() bool {
		data, _ := os.ReadFile(filepath.Join(runDir, "stdout.log"))
		return strings.HasSuffix(string(data), "END-OF-STDOUT\n")
	})
	data, _ := os.ReadFile(filepath.Join(runDir, "stdout.log"))
	if len(data) > limit+1<<10 || !strings.Contains(string(data), "of output cut here") {
		t.Errorf("the coordinator's stdout.log has %d bytes, want about %d with a line saying what was cut", len(data), limit)
	}
	var res struct {
		OutputCut map[string]int64 `json:"outputCut"`
	}
	raw, _ := os.ReadFile(filepath.Join(runDir, "result.json"))
	if json.Unmarshal(raw, &res); res.OutputCut["stdout.log"] != 200000000+int64(len("END-OF-STDOUT\n"))-limit {
		t.Errorf("result.json: %s", raw)
	}
}
