package remote_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskd/taskd/daemon/task"
)

// Ensure someone with a worker's credentials who knows an attempt's id
// cannot have the stream drop the worker's End, or its Started, as a
// duplicate by storing a message with the id the worker's would carry
// first (the runs stream de-duplicates message ids across its subjects):
// the End is recorded, and the attempt, which ran, is not recorded
// interrupted and run again.
func TestRemote_EndCannotBeDroppedAsADuplicate(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	c.worker("w1", "--profiles", "exec")
	work := t.TempDir()
	c.drop("l", "1", execTask(`echo "$TASKD_TASK_ID $TASKD_ATTEMPT" >> ran; while [ ! -e release ]; do sleep 0.05; done; echo '{"success": true, "summary": "done"}'`, work, nil))
	run := filepath.Join(c.listDir("l"), ".taskd", "runs", "1", "1")
	var id string
	c.waitFor("the attempt to run on w1", 30*time.Second, func() bool {
		id, _ = remoteOf(run)
		return id != "" && lastRunWorker(c, "l", "1") == "w1"
	})

	w := newRogue(t, c, "worker", workerPassword, "_INBOX.taskd.worker.rogue")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, msgID := range []string{id + ".end", id + ".started"} {
		m := &nats.Msg{Subject: "taskd.run." + id + ".err", Data: []byte("junk\n")}
		if _, err := w.js.PublishMsg(ctx, m, jetstream.WithMsgID(msgID)); err != nil {
			t.Fatalf("publish with message id %s: %v", msgID, err)
		}
	}
	if err := os.WriteFile(filepath.Join(work, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c.waitState("l", []string{"1"}, task.Succeeded, 30*time.Second)
	if n, _ := c.read("l", "1").Metadata.Object("taskd").Int("attempt"); n != 1 {
		t.Errorf("the task took %d attempts, want 1", n)
	}
	checkRanOnce(t, filepath.Join(work, "ran"))
	checkRecordedOnce(t, c.events("l"))
}
