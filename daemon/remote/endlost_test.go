package remote_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
)

// Ensure an attempt whose worker stored its End while the coordinator was
// down, in a store the server then lost, is neither left waiting for ever
// nor run again: the coordinator, restarted, publishes the attempt again
// (no worker holds it, the server has nothing of it), and the worker
// where it ended sends its End again instead of only taking it off the
// queue; the result is recorded once.
func TestRemote_EndLostWithTheStore(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := newClusterOn(t, srv, []string{"l"}, nil, nil)
	w1 := c.worker("w1", "--profiles", "exec")
	work := t.TempDir()
	c.drop("l", "1", execTask(`echo "$TASKD_TASK_ID $TASKD_ATTEMPT" >> ran; while [ ! -e release ]; do sleep 0.05; done; echo '{"success": true, "summary": "ran on w1"}'`, work, nil))
	c.waitFor("the attempt to run on w1", 30*time.Second, func() bool { return lastRunWorker(c, "l", "1") == "w1" })

	c.kill(c.coord)
	if err := os.WriteFile(filepath.Join(work, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c.waitFor("w1 to store the attempt's end", 30*time.Second, func() bool {
		return strings.Contains(w1.out.String(), "attempt ended")
	})
	srv.Stop()
	srv.Wipe()
	srv.Restart()
	c.restart(c.coord)

	c.waitState("l", []string{"1"}, task.Succeeded, time.Minute)
	if s, _ := c.read("l", "1").Metadata.Object("taskd").Object("result").String("summary"); s != "ran on w1" {
		t.Errorf("summary = %q, want the agent's", s)
	}
	if n := checkRanOnce(t, filepath.Join(work, "ran")); n != 1 {
		t.Errorf("%d attempts ran, want 1", n)
	}
	checkRecordedOnce(t, c.events("l"))
}
