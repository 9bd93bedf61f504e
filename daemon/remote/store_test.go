package remote_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
)

// Ensure a server that comes back with an empty store is recovered from
// without restarting anything: with attempts running on the workers,
// others queued in the work stream and more waiting for the
// coordinator's slots, the server is stopped, its store deleted, and
// started again. The coordinator makes the streams, the bucket and the
// consumers again, the workers bind to them, the running attempts' ends
// arrive and are recorded, the queued ones the server lost are published
// again from their run folders; every task succeeds, each agent ran once,
// and no taskd process was restarted.
func TestRemote_StoreLost(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := newClusterOn(t, srv, []string{"l"}, nil, nil)
	w1 := c.worker("w1", "--profiles", "exec", "--concurrency", "2")
	w2 := c.worker("w2", "--profiles", "exec", "--concurrency", "2")
	marks := t.TempDir()
	ran, goOn := filepath.Join(marks, "ran"), filepath.Join(marks, "go")
	script := `echo "$TASKD_TASK_ID $TASKD_ATTEMPT" >> ` + ran + `; while [ ! -e ` + goOn + ` ]; do sleep 0.05; done`
	var ids []string
	for i := 1; i <= 10; i++ {
		id := strconv.Itoa(i)
		c.drop("l", id, execTask(script, marks, nil))
		ids = append(ids, id)
	}
	c.waitFor("four agents to run, more attempts queued", time.Minute, func() bool {
		data, _ := os.ReadFile(ran)
		return strings.Count(string(data), "\n") == 4 && queuedAttempts(c, ids) >= 2
	})

	srv.Stop()
	srv.Wipe()
	if err := os.WriteFile(goOn, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	srv.Restart()
	t.Logf("the server came back empty after %s", time.Since(c.started).Round(time.Second))

	c.waitState("l", ids, task.Succeeded, 3*time.Minute)
	checkRecordedOnce(t, c.events("l"))
	if n := checkRanOnce(t, ran); n != len(ids) {
		t.Errorf("%d attempts ran, want %d", n, len(ids))
	}
	for _, p := range []*proc{c.coord, w1, w2} {
		select {
		case <-p.done:
			t.Errorf("%s exited", p.name)
		default:
		}
	}
	if !strings.Contains(c.coord.out.String(), "made the streams again") {
		t.Errorf("the coordinator did not say it made the streams again:\n%s", c.coord.out)
	}
	if !strings.Contains(c.coord.out.String(), "publishing again an attempt the NATS server does not have") {
		t.Errorf("the coordinator published no lost attempt again:\n%s", c.coord.out)
	}
}

// queuedAttempts counts the tasks of ids whose attempt waits in the work
// stream (cmd.json says queued).
func queuedAttempts(c *cluster, ids []string) int {
	n := 0
	for _, id := range ids {
		data, _ := os.ReadFile(filepath.Join(c.listDir("l"), ".taskd", "runs", id, "1", "cmd.json"))
		if strings.Contains(string(data), `"state": "queued"`) {
			n++
		}
	}
	return n
}
