package remote_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/daemon/task"
)

// taskdIn runs taskd with args in the cluster's environment and returns
// its output and exit status.
func (c *cluster) taskdIn(args ...string) (string, int) {
	c.t.Helper()
	cmd := exec.Command(taskdBinary(c.t), args...)
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(c.dir, "home"), "XDG_CONFIG_HOME="+filepath.Join(c.dir, "config"), "TASKD_ROOT=")
	out, _ := cmd.CombinedOutput()
	return string(out), cmd.ProcessState.ExitCode()
}

// Ensure an operator sees and steers the pool: taskd workers lists each
// worker's name, host, version, profiles, labels, slots in use, last
// heartbeat and attempts; a task that asks for a label runs only on a
// worker with it, and one whose labels no worker has says so; taskd
// worker --drain lets the drained worker finish what it runs (recorded
// succeeded, not interrupted), take nothing new, and stop; SIGTERM
// drains with a deadline (--drain-timeout): what still runs then is
// stopped, recorded interrupted naming the worker, and runs again
// elsewhere.
func TestRemote_OperatorsView(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	gpu := c.worker("gpu1", "--profiles", "exec", "--label", "gpu", "--concurrency", "2")
	c.worker("plain1", "--profiles", "exec,claude", "--concurrency", "3")
	marks := t.TempDir()
	goOn := filepath.Join(marks, "go")
	wait := `while [ ! -e ` + goOn + ` ]; do sleep 0.05; done`
	c.drop("l", "gpu", execTask(wait, marks, map[string]any{"taskd.labels": []string{"gpu"}}))
	c.drop("l", "tpu", execTask("true", marks, map[string]any{"taskd.labels": []string{"tpu"}}))
	c.drop("l", "any", execTask(wait, marks, nil))
	run := func(id string) string { return filepath.Join(c.listDir("l"), ".taskd", "runs", id, "1") }
	c.waitFor("the gpu task to run on gpu1, the other on any worker", time.Minute, func() bool {
		_, g := remoteOf(run("gpu"))
		_, a := remoteOf(run("any"))
		return g == "gpu1" && a != ""
	})
	c.waitFor("the tpu task to say no worker has its label", time.Minute, func() bool {
		tf := c.read("l", "tpu")
		s, _ := tf.Metadata.Object("taskd").String("dispatch")
		return strings.Contains(s, `has the labels tpu`)
	})
	status, _ := c.taskdIn("status", "--root", c.root)
	for _, want := range []string{"on worker gpu1", "has the labels tpu", "queued for a worker"} {
		if !strings.Contains(status, want) {
			t.Errorf("taskd status does not say %q:\n%s", want, status)
		}
	}

	out, code := c.taskdIn("workers", "--config", c.config)
	if code != 0 {
		t.Fatalf("taskd workers: status %d\n%s", code, out)
	}
	host, _ := os.Hostname()
	for _, want := range []string{"NAME", "HEARTBEAT", "gpu1", "plain1", host, "exec,claude", "gpu", "/2", "/3", "serving", "l/gpu#1 running", "coordinator: the coordinator of " + c.root} {
		if !strings.Contains(out, want) {
			t.Errorf("taskd workers does not say %q:\n%s", want, out)
		}
	}
	js, _ := c.taskdIn("workers", "--config", c.config, "--json")
	var view remote.PoolView
	if err := json.Unmarshal([]byte(js), &view); err != nil || len(view.Workers) != 2 {
		t.Fatalf("taskd workers --json: %v\n%s", err, js)
	}
	for _, w := range view.Workers {
		if !w.Trusted || w.Heartbeat.Version == "" || w.Heartbeat.Slots == 0 || w.Stored.IsZero() {
			t.Errorf("taskd workers --json: %+v", w)
		}
	}
	// Ages are told against the server's clock (here, this machine's).
	if d := time.Since(view.ServerTime); d < -5*time.Second || d > 5*time.Second {
		t.Errorf("taskd workers --json: serverTime %s is %s from now", view.ServerTime, d)
	}

	// Drain gpu1 while its agent runs: it finishes, nothing new goes to
	// it, it stops.
	drained := make(chan string, 1)
	go func() {
		out, _ := c.taskdIn("worker", "--drain", "--state", filepath.Join(c.dir, "state-gpu1"))
		drained <- out
	}()
	c.waitFor("taskd workers to show gpu1 draining", 30*time.Second, func() bool {
		out, _ := c.taskdIn("workers", "--config", c.config)
		return lineWith(out, "gpu1", "draining")
	})
	c.drop("l", "gpu2", execTask("true", marks, map[string]any{"taskd.labels": []string{"gpu"}}))
	if err := os.WriteFile(goOn, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c.waitState("l", []string{"gpu", "any"}, task.Succeeded, time.Minute)
	select {
	case out := <-drained:
		if !strings.Contains(out, "the worker has stopped") {
			t.Errorf("taskd worker --drain:\n%s", out)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("taskd worker --drain did not return")
	}
	<-gpu.done
	if code := gpu.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the drained worker exited with %d", code)
	}
	if tf := c.read("l", "gpu2"); task.Of(tf) != task.Running {
		t.Errorf("a gpu task dropped while the only gpu worker drained is %s, want running (queued)", task.Of(tf))
	}
	out, _ = c.taskdIn("workers", "--config", c.config)
	if !lineWith(out, "gpu1", "stopped") {
		t.Errorf("taskd workers does not show gpu1 stopped:\n%s", out)
	}

	// SIGTERM with a short drain timeout stops what still runs; it runs
	// again on another worker.
	c.worker("gpu2", "--profiles", "exec", "--label", "gpu", "--drain-timeout", "2s")
	c.waitState("l", []string{"gpu2"}, task.Succeeded, time.Minute)
	c.drop("l", "long", execTask(`echo "$TASKD_ATTEMPT" >> `+filepath.Join(marks, "long")+`; [ "$TASKD_ATTEMPT" = 2 ] || sleep 60`, marks, map[string]any{"taskd.labels": []string{"gpu"}}))
	c.waitFor("the long task to run on gpu2", time.Minute, func() bool {
		_, w := remoteOf(run("long"))
		data, _ := os.ReadFile(filepath.Join(marks, "long"))
		return w == "gpu2" && len(data) > 0
	})
	g2 := c.workers["gpu2"]
	stopping := time.Now()
	g2.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g2.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("gpu2 did not stop after its drain timeout")
	}
	if d := time.Since(stopping); d < 2*time.Second {
		t.Errorf("gpu2 stopped after %s, before its drain timeout", d)
	}
	c.worker("gpu3", "--profiles", "exec", "--label", "gpu")
	c.waitState("l", []string{"long"}, task.Succeeded, 2*time.Minute)
	var interrupted []string
	for _, e := range c.events("l") {
		if e.Type == eventlog.TaskInterrupted && e.Task == "long" {
			msg, _ := e.Data["error"].(string)
			interrupted = append(interrupted, msg)
		}
	}
	if len(interrupted) != 1 || !strings.Contains(interrupted[0], "worker gpu2 stopped") {
		t.Errorf("the long task's interruptions: %q, want one naming gpu2", interrupted)
	}
}

// lineWith reports whether a line of out has every one of words.
func lineWith(out string, words ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		all := true
		for _, w := range words {
			all = all && strings.Contains(l, w)
		}
		if all {
			return true
		}
	}
	return false
}
