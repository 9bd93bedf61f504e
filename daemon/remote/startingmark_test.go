package remote_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/daemon/task"
)

// startingAttempt leaves task 2 of list l as a coordinator killed before
// the running mark of an attempt it sent to a worker leaves it: the
// attempt published (no worker runs yet), cmd.json saying it passed its
// gate, and the task file as the claim, made ahead of the slot, wrote it
// (starting). The coordinator is left dead. It returns the cluster, the
// attempt's id, and the file in which the attempt's script writes a line
// when it runs.
func startingAttempt(t *testing.T) (c *cluster, id, ran string) {
	t.Helper()
	c = newCluster(t, []string{"l"}, map[string]any{
		"concurrency": 1,
		"profiles":    map[string]any{"sh": map[string]any{"command": []string{"sh", "-c"}, "prompt": "arg"}},
	})
	// Profile sh runs here: task 1 holds the only slot with no worker.
	c.kill(c.coord)
	c.editConfig(func(cfg map[string]any) {
		cfg["nats"].(map[string]any)["local"] = []string{"sh"}
	})
	c.restart(c.coord)
	marks := t.TempDir()
	ran, release := filepath.Join(marks, "ran"), filepath.Join(marks, "release")
	c.drop("l", "1", execTask(`while [ ! -e `+release+` ]; do sleep 0.05; done`, marks, map[string]any{"taskd.agent": "sh"}))
	c.waitState("l", []string{"1"}, task.Running, time.Minute)
	c.drop("l", "2", execTask(`echo "$TASKD_TASK_ID $TASKD_ATTEMPT" >> `+ran, marks, nil))
	c.waitState("l", []string{"2"}, task.Starting, time.Minute) // claimed ahead of the slot task 1 holds
	file := filepath.Join(c.listDir("l"), "2.json")
	claim, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	touch(t, release)
	c.waitState("l", []string{"1"}, task.Succeeded, time.Minute)
	id = c.remoteAttempt("l", "2", 1)
	cmd := filepath.Join(c.listDir("l"), ".taskd", "runs", "2", "1", "cmd.json")
	if !entered(cmd) {
		t.Fatalf("cmd.json of task 2's attempt does not say it passed its gate")
	}
	client := c.coordinatorClient()
	subject := workSubjectOf(t, cmd)
	c.waitFor("task 2's attempt to be published", time.Minute, func() bool {
		return queuedWork(client, subject)
	})
	c.kill(c.coord)
	// The running mark, which the job writes after the publish, never
	// made it to disk.
	if err := os.WriteFile(file, claim, 0o600); err != nil {
		t.Fatal(err)
	}
	return c, id, ran
}

// workSubjectOf is the subject cmd.json at path says its attempt was
// published on.
func workSubjectOf(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cmd struct {
		Remote struct {
			Subject string `json:"subject"`
		} `json:"remote"`
	}
	if err := json.Unmarshal(data, &cmd); err != nil || cmd.Remote.Subject == "" {
		t.Fatalf("cmd.json names no subject (%v):\n%s", err, data)
	}
	return cmd.Remote.Subject
}

// queuedWork reports whether the work stream holds an attempt on subject.
func queuedWork(client *remote.Client, subject string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := client.Conn.RequestWithContext(ctx, "$JS.API.DIRECT.GET."+strings.ToUpper(client.Prefix)+"_WORK."+subject, nil)
	return err == nil && m.Header.Get("Status") == ""
}

// publishEnd publishes, as a worker the coordinator trusts, an End of
// attempt id of a task that does not exist, and waits for the
// coordinator to drop it: the coordinator has looked at every End
// published before.
func (c *cluster) publishEnd(id string) {
	c.t.Helper()
	nc, err := remote.Connect(remote.Dial{URL: c.nats.URL(), NATS: &config.NATS{User: "worker", Password: workerPassword}, Name: "test", Inbox: remote.WorkerInbox("taskd", "test"), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		c.t.Fatal(err)
	}
	defer nc.Close()
	signer, err := remote.LoadSigner(filepath.Join(c.dir, "keys", "worker0.nk"))
	if err != nil {
		c.t.Fatal(err)
	}
	client, err := remote.NewClient(nc, "taskd", signer)
	if err != nil {
		c.t.Fatal(err)
	}
	end, _ := json.Marshal(remote.End{Worker: "test", List: "l", Task: "none", N: 1, Outcome: "finished"})
	if _, err := client.Publish(context.Background(), id, remote.KindEnd, remote.Message{Data: end}); err != nil {
		c.t.Fatal(err)
	}
	c.waitFor("the coordinator to drop the End of "+id, 30*time.Second, func() bool {
		return droppedEnd(c.coord.out.String(), id)
	})
}

// droppedEnd reports whether log has the coordinator's line dropping the
// End of attempt id.
func droppedEnd(log, id string) bool {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "dropping a result no task expects") && strings.Contains(line, id) {
			return true
		}
	}
	return false
}

// Ensure the End of an attempt whose task a restart found starting (the
// coordinator died after publishing it, before the running mark was
// written), delivered before the recovery follows the attempt, is kept:
// not dropped and forgotten from the runs stream as one no task expects.
// The recovery then finds it and records the worker's result; the
// attempt is never published again, and runs once. (The list is refused
// while the End arrives — it is writable by others —, so that its
// recovery waits until the test fixes its mode.)
func TestRemote_EndOfAStartingTaskIsKeptForItsRecovery(t *testing.T) {
	t.Parallel()
	c, id, ran := startingAttempt(t)
	client := c.coordinatorClient()
	if err := os.Chmod(c.listDir("l"), 0o777); err != nil {
		t.Fatal(err)
	}
	c.restart(c.coord)
	c.waitFor("the list to be refused", 30*time.Second, func() bool {
		return strings.Contains(c.coord.out.String(), "not serving list")
	})
	c.publishEnd("BeforeTheWorker000001") // the coordinator watches for Ends
	c.worker("w1", "--profiles", "exec")
	c.waitFor("the worker to run the attempt and send its End", time.Minute, func() bool {
		if data, _ := os.ReadFile(ran); len(data) == 0 {
			return false
		}
		m, err := client.Last(context.Background(), id, remote.KindEnd)
		return err == nil && m != nil || droppedEnd(c.coord.out.String(), id)
	})
	c.publishEnd("AfterTheWorker0000001") // the coordinator has looked at the End
	if droppedEnd(c.coord.out.String(), id) {
		t.Fatalf("the coordinator dropped the End of attempt %s, whose task reads %s:\n%s", id, taskState(filepath.Join(c.listDir("l"), "2.json")), c.logs())
	}
	if m, err := client.Last(context.Background(), id, remote.KindEnd); err != nil || m == nil {
		t.Fatalf("the runs stream no longer holds the End of attempt %s (%v)", id, err)
	}
	if got := taskState(filepath.Join(c.listDir("l"), "2.json")); got != task.Starting {
		t.Fatalf("task 2 reads %s before its recovery, want starting", got)
	}
	if err := os.Chmod(c.listDir("l"), 0o700); err != nil {
		t.Fatal(err)
	}
	c.waitState("l", []string{"2"}, task.Succeeded, time.Minute)
	tf := c.read("l", "2")
	if n, _ := tf.Metadata.Object("taskd").Int("attempt"); n != 1 {
		t.Errorf("task 2 took %d attempts, want 1", n)
	}
	if res := task.RecordOf(tf).Result; res == nil {
		t.Errorf("task 2 records no result")
	} else if ok, _ := res.Bool("success"); !ok {
		t.Errorf("task 2's result is no success: %v", res)
	}
	if n := checkRanOnce(t, ran); n != 1 {
		t.Errorf("%d attempts ran, want 1", n)
	}
	if out := c.coord.out.String(); strings.Contains(out, "publishing again an attempt") {
		t.Errorf("the coordinator published the attempt again:\n%s", out)
	}
}

// Ensure an attempt whose task a restart found starting, followed with no
// worker to take it, is marked running once followed (its agent runs, or
// will: the task no longer reads as waiting for a slot), says why it
// waits in its task file (metadata.taskd.dispatch), and that the note goes
// once a worker has run it.
func TestRemote_StartingTaskSaysWhyItsAttemptWaits(t *testing.T) {
	t.Parallel()
	c, _, ran := startingAttempt(t)
	c.restart(c.coord)
	var note string
	var state task.State
	c.waitFor("task 2 to say why its attempt waits", time.Minute, func() bool {
		tf := c.read("l", "2")
		if tf == nil {
			return false
		}
		state = task.Of(tf)
		note, _ = tf.Metadata.Object("taskd").String("dispatch")
		return note != ""
	})
	if state != task.Running {
		t.Errorf("task 2 reads %s while its followed attempt waits for a worker, want running", state)
	}
	t.Logf("task 2 says: %s", note)
	if !strings.Contains(note, "worker") {
		t.Errorf("the note %q does not speak of workers", note)
	}
	c.worker("w1", "--profiles", "exec")
	c.waitState("l", []string{"2"}, task.Succeeded, time.Minute)
	if note, ok := c.read("l", "2").Metadata.Object("taskd").String("dispatch"); ok {
		t.Errorf("task 2 still says %q once it ended", note)
	}
	if n := checkRanOnce(t, ran); n != 1 {
		t.Errorf("%d attempts ran, want 1", n)
	}
}
