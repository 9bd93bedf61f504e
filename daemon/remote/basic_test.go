package remote_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/daemon/task"
)

// Ensure an exec task dropped into a coordinator's list runs on a worker,
// and its run folder and task file are what a local run leaves.
func TestRemote_RunsOnWorker(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	c.worker("w1", "--profiles", "exec")
	work := t.TempDir()
	c.drop("l", "1", execTask("echo out-$TASKD_TASK_ID; echo err >&2; pwd > where", work, nil))
	c.drop("l", "2", execTask("true", work, nil))
	c.waitState("l", []string{"1", "2"}, task.Succeeded, 30*time.Second)
	// A log is made at its first byte, here as on the worker: an agent
	// that says nothing leaves none.
	for _, name := range []string{"stdout.log", "stderr.log"} {
		if _, err := os.Lstat(filepath.Join(c.listDir("l"), ".taskd", "runs", "2", "1", name)); !os.IsNotExist(err) {
			t.Errorf("a remote attempt of true left %s (%v), want none", name, err)
		}
	}
	run := filepath.Join(c.listDir("l"), ".taskd", "runs", "1", "1")
	for name, want := range map[string]string{"stdout.log": "out-1\n", "stderr.log": "err\n", "prompt.md": "echo out-$TASKD_TASK_ID; echo err >&2; pwd > where"} {
		got, err := os.ReadFile(filepath.Join(run, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q\n%s", name, got, err, want, c.logs())
		}
	}
	cmd, _ := os.ReadFile(filepath.Join(run, "cmd.json"))
	if !strings.Contains(string(cmd), `"worker": "w1"`) || !strings.Contains(string(cmd), `"argv"`) {
		t.Errorf("cmd.json does not record the worker and the command line:\n%s", cmd)
	}
	if where, _ := os.ReadFile(filepath.Join(work, "where")); strings.TrimSpace(string(where)) != work {
		t.Errorf("ran in %q, want %q", where, work)
	}
	res, _ := os.ReadFile(filepath.Join(run, "result.json"))
	if !strings.Contains(string(res), `"success": true`) {
		t.Errorf("result.json = %s", res)
	}
	// Once its end is recorded, the runs stream forgets the attempt (in
	// the background: the task does not wait for it).
	client := c.coordinatorClient()
	id := c.remoteAttempt("l", "1", 1)
	for _, kind := range []string{remote.KindStart, remote.KindStarted, remote.KindOut, remote.KindEnd} {
		c.waitFor("the runs stream to forget the attempt's "+kind, 20*time.Second, func() bool {
			m, err := client.Last(context.Background(), id, kind)
			return err == nil && m == nil
		})
	}
	// Nor does the server keep the consumer the coordinator followed the
	// attempt with.
	c.waitFor("the consumers of the runs stream to be deleted", 20*time.Second, func() bool {
		st, err := client.JS.Stream(context.Background(), "TASKD_RUNS")
		return err == nil && st.CachedInfo().State.Consumers == 0
	})
}
