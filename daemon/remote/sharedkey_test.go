package remote_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/waitfor"
)

// Ensure two workers given the same key (a configuration copied from one
// machine to another) are each judged by their own heartbeats: the
// heartbeat of one does not make the other's attempts look like those of
// a worker that restarted, recorded interrupted and run again and again;
// each task runs once, and the coordinator's log says two workers share
// a key.
func TestRemote_WorkersSharingAKey(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	c.worker("w1", "--profiles", "exec", "--concurrency", "1")
	config := c.workerConfig("w2", nil)
	data, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	// w2 signs with w1's key.
	shared := strings.Replace(string(data), "worker1.nk", "worker0.nk", 1)
	if shared == string(data) {
		t.Fatalf("w2's configuration names no worker1.nk: %s", data)
	}
	if err := os.WriteFile(config, []byte(shared), 0o600); err != nil {
		t.Fatal(err)
	}
	w2 := &proc{name: "w2", args: []string{taskdBinary(t), "worker", "--config", config, "--name", "w2",
		"--state", filepath.Join(c.dir, "state-w2"), "--heartbeat", heartbeat.String(), "--grace", "1s",
		"--profiles", "exec", "--concurrency", "1", "--log-level", "debug"}}
	c.workers["w2"] = w2
	c.start(w2)

	work := t.TempDir()
	ids := []string{"1", "2"}
	for _, id := range ids {
		// Each agent runs for several heartbeats of both workers.
		c.drop("l", id, execTask(`echo "$TASKD_TASK_ID $TASKD_ATTEMPT" >> ran; sleep 3; echo '{"success": true}'`, work, nil))
	}
	c.waitState("l", ids, task.Succeeded, time.Minute)
	if n := checkRanOnce(t, filepath.Join(work, "ran")); n != len(ids) {
		t.Errorf("%d attempts ran, want one per task", n)
	}
	for _, id := range ids {
		if n, _ := c.read("l", id).Metadata.Object("taskd").Int("attempt"); n != 1 {
			t.Errorf("task %s took %d attempts, want 1", id, n)
		}
	}
	checkRecordedOnce(t, c.events("l"))
	if !waitfor.Within(10*time.Second, func() bool {
		return strings.Contains(c.coord.out.String(), "two workers publish heartbeats under one key")
	}) {
		t.Errorf("the coordinator's log does not say two workers share a key")
	}
}
