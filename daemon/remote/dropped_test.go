package remote_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskd/taskd/daemon/task"
)

// Ensure an attempt that someone with a worker's credentials pulled and
// acknowledged without claiming it — taken off the queue, run by nobody —
// is published again and run, although the server still remembers its
// message id: the work stream's deduplication window would drop a copy
// published again under the same id for half an hour.
func TestRemote_DroppedAttemptIsPublishedAgain(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	work := t.TempDir()
	c.drop("l", "1", execTask(`echo "$TASKD_TASK_ID $TASKD_ATTEMPT" >> ran; echo '{"success": true}'`, work, nil))
	run := filepath.Join(c.listDir("l"), ".taskd", "runs", "1", "1")
	var id string
	c.waitFor("the attempt to be published", 30*time.Second, func() bool {
		id, _ = remoteOf(run)
		return id != ""
	})

	w := newRogue(t, c, "worker", workerPassword, "_INBOX.taskd.worker.rogue")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var cons jetstream.Consumer
	c.waitFor("the work consumer", 20*time.Second, func() bool {
		var err error
		cons, err = w.js.Consumer(ctx, "TASKD_WORK", "work-exec")
		return err == nil
	})
	m, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("pull the attempt: %v", err)
	}
	if !strings.HasSuffix(m.Subject(), "."+id) {
		t.Fatalf("pulled %s, want the attempt %s", m.Subject(), id)
	}
	if err := m.DoubleAck(ctx); err != nil {
		t.Fatalf("acknowledge the attempt: %v", err)
	}

	c.worker("w1", "--profiles", "exec")
	c.waitState("l", []string{"1"}, task.Succeeded, 45*time.Second)
	if n := checkRanOnce(t, filepath.Join(work, "ran")); n != 1 {
		t.Errorf("%d attempts ran, want 1", n)
	}
	checkRecordedOnce(t, c.events("l"))
}
