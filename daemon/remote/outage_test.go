package remote_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
)

// Ensure a broker outage is not a lost worker: with the server stopped for
// longer than the ack wait and the coordinator's lostAfter (outage), the
// agents that were running finish meanwhile, and when the server is back
// their real results are recorded, once each; none runs again, none is
// recorded interrupted, and a task dropped during the outage runs after
// it.
func TestRemote_OutageIsNotALostWorker(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	c.worker("w1", "--profiles", "exec", "--concurrency", "3")
	c.worker("w2", "--profiles", "exec", "--concurrency", "3")
	marks := t.TempDir()
	ran, goOn := filepath.Join(marks, "ran"), filepath.Join(marks, "go")
	script := `echo "$TASKD_TASK_ID $TASKD_ATTEMPT" >> ` + ran + `; while [ ! -e ` + goOn + ` ]; do sleep 0.05; done; echo "{\"success\": true, \"summary\": \"finished $TASKD_TASK_ID\"}"`
	var ids []string
	for i := 1; i <= 6; i++ {
		id := strconv.Itoa(i)
		c.drop("l", id, execTask(script, marks, nil))
		ids = append(ids, id)
	}
	c.waitFor("every agent to run on a worker", time.Minute, func() bool {
		data, _ := os.ReadFile(ran)
		return strings.Count(string(data), "\n") == len(ids)
	})

	missed := func(w *proc) int { return strings.Count(w.out.String(), "cannot publish the heartbeat") }
	before := map[*proc]int{}
	for _, w := range c.workers {
		before[w] = missed(w)
	}
	c.nats.Stop()
	stopped := time.Now()
	if err := os.WriteFile(goOn, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c.drop("l", "late", execTask(`echo "late 1" >> `+ran, marks, nil))
	// The outage lasts until every worker has missed the heartbeats of
	// outage: its coordinator heard nothing of it for that long.
	c.waitFor("every worker to miss the heartbeats of the outage", outage+time.Minute, func() bool {
		for _, w := range c.workers {
			if missed(w)-before[w] < int(outage/heartbeat) {
				return false
			}
		}
		return true
	})
	c.nats.Restart()
	t.Logf("the server was down for %s", time.Since(stopped).Round(time.Second))

	c.waitState("l", append(ids, "late"), task.Succeeded, 2*time.Minute)
	for _, id := range ids {
		if s, _ := c.read("l", id).Metadata.Object("taskd").Object("result").String("summary"); s != "finished "+id {
			t.Errorf("task %s: summary %q, not its agent's", id, s)
		}
	}
	checkRecordedOnce(t, c.events("l"))
	if n := checkRanOnce(t, ran); n != len(ids)+1 {
		t.Errorf("%d attempts ran, want %d", n, len(ids)+1)
	}
	for _, e := range c.events("l") {
		if e.Type == eventlog.TaskInterrupted {
			t.Errorf("attempt %s/%d was recorded interrupted: %v", e.Task, e.Attempt, e.Data["error"])
		}
	}
	if strings.Contains(c.coord.out.String(), "worker is lost") {
		t.Errorf("the coordinator took a worker for lost during the outage:\n%s", c.coord.out)
	}
}
