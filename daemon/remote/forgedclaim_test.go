package remote_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/daemon/task"
)

// Ensure a claim no worker made — stored first by someone with a worker's
// credentials, unsigned, or naming a worker's key and boot with a
// signature that does not verify — makes no worker run the attempt and
// does not leave its task waiting for ever: the worker it names does not
// take it for its own, every worker leaves the attempt, and the
// coordinator records it interrupted, saying why, and runs it again.
func TestRemote_ForgedClaimIsNoWorkers(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	w1 := c.worker("w1", "--profiles", "exec", "--concurrency", "1")
	work := t.TempDir()
	// w1 is kept busy while the rogue takes the other attempts.
	c.drop("l", "1", execTask(`while [ ! -e release ]; do sleep 0.05; done; echo '{"success": true}'`, work, nil))
	c.waitFor("task 1 to run on w1", 30*time.Second, func() bool { return lastRunWorker(c, "l", "1") == "w1" })
	ids := map[string]string{} // attempt id -> task
	for _, id := range []string{"2", "3"} {
		c.drop("l", id, execTask(`echo "$TASKD_TASK_ID $TASKD_ATTEMPT" >> ran; echo '{"success": true}'`, work, nil))
		run := filepath.Join(c.listDir("l"), ".taskd", "runs", id, "1")
		c.waitFor("task "+id+"'s attempt to be published", 30*time.Second, func() bool {
			a, _ := remoteOf(run)
			if a != "" {
				ids[a] = id
			}
			return a != ""
		})
	}

	// w1's key and boot, as its claim of task 1 names them.
	co := newRogue(t, c, "coordinator", coordinatorPassword, "_INBOX.taskd.coordinator.rogue")
	id1, _ := remoteOf(filepath.Join(c.listDir("l"), ".taskd", "runs", "1", "1"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runs, err := co.js.Stream(ctx, "TASKD_RUNS")
	if err != nil {
		t.Fatal(err)
	}
	claim, err := runs.GetLastMsgForSubject(ctx, remote.RunSubject("taskd", id1, remote.KindStart))
	if err != nil {
		t.Fatal(err)
	}

	w := newRogue(t, c, "worker", workerPassword, "_INBOX.taskd.worker.rogue")
	cons, err := w.js.Consumer(ctx, "TASKD_WORK", "work-exec")
	if err != nil {
		t.Fatal(err)
	}
	// Both attempts are pulled before either goes back to the queue: an
	// attempt given back at once (Nak) is delivered again at once, and
	// would be pulled a second time instead of the other.
	var pulled []jetstream.Msg
	for range 2 {
		m, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("pull an attempt: %v", err)
		}
		pulled = append(pulled, m)
	}
	for _, m := range pulled {
		a := m.Subject()[strings.LastIndexByte(m.Subject(), '.')+1:]
		forged := &nats.Msg{Subject: remote.RunSubject("taskd", a, remote.KindStart), Header: nats.Header{}}
		switch ids[a] {
		case "2": // w1's key and boot, its signature of another attempt's claim
			forged.Data = claim.Data
			forged.Header.Set(remote.KeyHeader, claim.Header.Get(remote.KeyHeader))
			forged.Header.Set(remote.SigHeader, claim.Header.Get(remote.SigHeader))
		case "3": // unsigned
			forged.Data, _ = json.Marshal(remote.Start{Worker: "rogue", Boot: "rogue", At: time.Now()})
		default:
			t.Fatalf("pulled %s, not an attempt of task 2 or 3", m.Subject())
		}
		if _, err := w.js.PublishMsg(ctx, forged, jetstream.WithExpectLastSequencePerSubject(0)); err != nil {
			t.Fatalf("store a forged claim: %v", err)
		}
		if err := m.Nak(); err != nil { // back to the queue, for w1
			t.Fatal(err)
		}
	}

	if err := os.WriteFile(filepath.Join(work, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c.waitState("l", []string{"1", "2", "3"}, task.Succeeded, time.Minute)
	ran, _ := os.ReadFile(filepath.Join(work, "ran"))
	for _, id := range []string{"2", "3"} {
		if strings.Contains(string(ran), id+" 1\n") {
			t.Errorf("task %s's first attempt, claimed by a forged claim, ran:\n%s", id, ran)
		}
		if n, _ := c.read("l", id).Metadata.Object("taskd").Int("attempt"); n != 2 {
			t.Errorf("task %s took %d attempts, want 2", id, n)
		}
	}
	checkRanOnce(t, filepath.Join(work, "ran"))
	checkRecordedOnce(t, c.events("l"))
	if !strings.Contains(c.coord.out.String(), "its claim is not a worker's") {
		t.Errorf("the coordinator does not say the claims were forged")
	}
	_ = w1
}
