package remote_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/daemon/task"
)

// runKinds are the kinds of message the runs stream holds of an attempt.
var runKinds = []string{remote.KindStart, remote.KindStarted, remote.KindOut, remote.KindErr, remote.KindEnd, remote.KindCancel}

// recorded is the kinds of message the runs stream holds of attempt id.
func recorded(t *testing.T, client *remote.Client, id string) []string {
	t.Helper()
	var kinds []string
	for _, kind := range runKinds {
		m, err := client.Last(context.Background(), id, kind)
		if err != nil {
			t.Fatal(err)
		}
		if m != nil {
			kinds = append(kinds, kind)
		}
	}
	return kinds
}

// Ensure a coordinator stopped (SIGTERM) while the record of an ended
// attempt waits to be forgotten forgets it on the way out: the runs
// stream holds nothing of it once the coordinator has exited, and the
// coordinator started again neither runs nor records it again.
func TestRemote_StopForgetsEndedAttempts(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	c.worker("w1", "--profiles", "exec")
	client := c.coordinatorClient()
	work := t.TempDir()

	// The forget waits two seconds after the task's end is written: a
	// machine under load may take longer to show the end than that, so
	// the test takes the first of a few tasks whose end it sees in time.
	var id, task1 string
	for i := 1; i <= 5 && id == ""; i++ {
		tid := itoa(i)
		c.drop("l", tid, execTask("echo ran >> ran-"+tid, work, nil))
		a := c.remoteAttempt("l", tid, 1)
		c.waitState("l", []string{tid}, task.Succeeded, 60*time.Second)
		if kinds := recorded(t, client, a); strings.Contains(strings.Join(kinds, " "), remote.KindEnd) {
			id, task1 = a, tid
		}
	}
	if id == "" {
		t.Fatalf("the runs stream forgot every attempt before the test could stop the coordinator\n%s", c.logs())
	}
	if err := c.coord.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.coord.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the coordinator did not stop within 30s of SIGTERM\n%s", c.logs())
	}
	if kinds := recorded(t, client, id); len(kinds) != 0 {
		t.Errorf("after the coordinator stopped, the runs stream still holds the %v of attempt %s\n%s", kinds, id, c.logs())
	}

	taskFile := filepath.Join(c.listDir("l"), task1+".json")
	before, err := os.ReadFile(taskFile)
	if err != nil {
		t.Fatal(err)
	}
	c.restart(c.coord)
	// A task dropped after the restart ends once the coordinator has
	// recovered what it found.
	c.drop("l", "after", execTask("true", work, nil))
	c.waitState("l", []string{"after"}, task.Succeeded, 60*time.Second)
	if kinds := recorded(t, client, id); len(kinds) != 0 {
		t.Errorf("after the restart, the runs stream holds the %v of attempt %s", kinds, id)
	}
	if data, _ := os.ReadFile(filepath.Join(work, "ran-"+task1)); string(data) != "ran\n" {
		t.Errorf("task %s's agent ran %d times, want once\n%s", task1, strings.Count(string(data), "ran"), c.logs())
	}
	if _, err := os.Stat(filepath.Join(c.listDir("l"), ".taskd", "runs", task1, "2")); err == nil {
		t.Errorf("task %s has a second attempt after the restart", task1)
	}
	if after, _ := os.ReadFile(taskFile); !bytes.Equal(after, before) {
		t.Errorf("the restart rewrote task %s:\nbefore %s\nafter  %s", task1, before, after)
	}
}
