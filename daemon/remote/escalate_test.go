package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/waitfor"
)

// A rogue is a client of the cluster's server with some role's
// credentials, that records the permissions the server denies it.
type rogue struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	mu     sync.Mutex
	denied []string
}

func newRogue(t *testing.T, c *cluster, user, password, inbox string) *rogue {
	t.Helper()
	r := &rogue{}
	nc, err := nats.Connect(c.nats.URL(), nats.UserInfo(user, password), nats.CustomInboxPrefix(inbox),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			r.mu.Lock()
			r.denied = append(r.denied, err.Error())
			r.mu.Unlock()
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	r.nc = nc
	r.js, _ = jetstream.New(nc)
	return r
}

// wasDenied reports whether the server denied the rogue something whose
// error names subject.
func (r *rogue) wasDenied(subject string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.denied {
		if strings.Contains(d, subject) {
			return true
		}
	}
	return false
}

// refused fails t unless try fails and the server reported a permission
// violation naming subject (it may take a moment to arrive).
func (r *rogue) refused(t *testing.T, what, subject string, try func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := try(ctx); err == nil {
		t.Errorf("%s: a worker's credentials were allowed to", what)
		return
	}
	if !waitfor.Within(5*time.Second, func() bool { return r.wasDenied(subject) }) {
		t.Errorf("%s: failed, but the server reported no permission violation for %s (%v)", what, subject, r.denied)
	}
}

// Ensure that a worker's credentials and key, on a real nats-server with
// the example's permissions, cannot do what the attacker did:
// change a stream's configuration so that a hand-made message reaches the
// work queue, publish work, create or delete streams and consumers, read
// other attempts' output and ends, take the coordinator's lock, or mark
// a task succeeded with a made-up end — and that work signed by a key the
// workers do not trust is never run, even when someone with the
// coordinator's credentials publishes it. The real attempt ends as its
// agent says, and its worker ran it once.
func TestRemote_WorkerCredentialsCannotEscalate(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	c.worker("w1", "--profiles", "exec")
	work := t.TempDir()
	release := filepath.Join(work, "release")
	c.drop("l", "1", execTask(`while [ ! -e release ]; do sleep 0.05; done; echo "real work"; echo '{"success": true, "summary": "the real summary"}'`, work, nil))
	run := filepath.Join(c.listDir("l"), ".taskd", "runs", "1", "1")
	var id string
	c.waitFor("the attempt to run on w1", 60*time.Second, func() bool {
		id, _ = remoteOf(run)
		return id != "" && lastRunWorker(c, "l", "1") == "w1"
	})

	w := newRogue(t, c, "worker", workerPassword, "_INBOX.taskd.worker.rogue")
	pwned := filepath.Join(work, "pwned")

	// The stream's configuration: the attack of the issue added the run
	// subjects (which workers may publish) to the work queue's.
	w.refused(t, "update the work stream's subjects", "$JS.API.STREAM.UPDATE.TASKD_WORK", func(ctx context.Context) error {
		_, err := w.js.UpdateStream(ctx, jetstream.StreamConfig{Name: "TASKD_WORK", Subjects: []string{"taskd.work.>", "taskd.run.>"}, Retention: jetstream.WorkQueuePolicy})
		return err
	})
	w.refused(t, "make a stream of its own over the run subjects", "$JS.API.STREAM.CREATE.ROGUE", func(ctx context.Context) error {
		_, err := w.js.CreateStream(ctx, jetstream.StreamConfig{Name: "ROGUE", Subjects: []string{"rogue.>"}})
		return err
	})
	w.refused(t, "delete the runs stream", "$JS.API.STREAM.DELETE.TASKD_RUNS", func(ctx context.Context) error {
		return w.js.DeleteStream(ctx, "TASKD_RUNS")
	})
	w.refused(t, "purge the work queue", "$JS.API.STREAM.PURGE.TASKD_WORK", func(ctx context.Context) error {
		_, err := w.nc.RequestWithContext(ctx, "$JS.API.STREAM.PURGE.TASKD_WORK", nil)
		return err
	})
	w.refused(t, "change a work consumer", "$JS.API.CONSUMER.CREATE.TASKD_WORK", func(ctx context.Context) error {
		_, err := w.js.CreateOrUpdateConsumer(ctx, "TASKD_WORK", jetstream.ConsumerConfig{Durable: "work-exec", FilterSubject: "taskd.work.exec.-.*", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Hour})
		return err
	})
	w.refused(t, "delete a work consumer", "$JS.API.CONSUMER.DELETE.TASKD_WORK", func(ctx context.Context) error {
		return w.js.DeleteConsumer(ctx, "TASKD_WORK", "work-exec")
	})

	// Work by hand: publishing on a work subject is not a worker's.
	handmade, _ := json.Marshal(remote.Work{ID: "Handmade000000000001", List: "l", Task: "1", N: 9, Profile: "exec", Prompt: "id > " + pwned, Cwd: work})
	w.refused(t, "publish a hand-made attempt", "taskd.work.exec.-.Handmade000000000001", func(ctx context.Context) error {
		_, err := w.js.Publish(ctx, "taskd.work.exec.-.Handmade000000000001", handmade)
		return err
	})

	// Reading what others' agents wrote: the runs stream, as a stream, by
	// subscription, by direct reads of output and ends, or the replies
	// meant for the coordinator.
	w.refused(t, "read the runs stream with a consumer", "$JS.API.CONSUMER.CREATE.TASKD_RUNS", func(ctx context.Context) error {
		_, err := w.js.OrderedConsumer(ctx, "TASKD_RUNS", jetstream.OrderedConsumerConfig{})
		return err
	})
	w.refused(t, "read an attempt's output directly", "$JS.API.DIRECT.GET.TASKD_RUNS.taskd.run."+id+".out", func(ctx context.Context) error {
		_, err := w.nc.RequestWithContext(ctx, "$JS.API.DIRECT.GET.TASKD_RUNS.taskd.run."+id+".out", nil)
		return err
	})
	w.refused(t, "read an attempt's end directly", "$JS.API.DIRECT.GET.TASKD_RUNS.taskd.run."+id+".end", func(ctx context.Context) error {
		_, err := w.nc.RequestWithContext(ctx, "$JS.API.DIRECT.GET.TASKD_RUNS.taskd.run."+id+".end", nil)
		return err
	})
	w.refused(t, "read a message of the runs stream", "$JS.API.STREAM.MSG.GET.TASKD_RUNS", func(ctx context.Context) error {
		_, err := w.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET.TASKD_RUNS", []byte(`{"seq": 1}`))
		return err
	})
	for _, subject := range []string{"taskd.run.>", "taskd.run.*.out", "_INBOX.taskd.coordinator.>", "$KV.TASKD_POOL.>"} {
		w.refused(t, "subscribe to "+subject, subject, func(ctx context.Context) error {
			sub, err := w.nc.SubscribeSync(subject)
			if err != nil {
				return err
			}
			defer sub.Unsubscribe()
			w.nc.Flush()
			_, err = sub.NextMsgWithContext(ctx)
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("nothing received") // the server dropped the subscription
			}
			return err
		})
	}

	// The prefix's lock, and another worker's heartbeat.
	w.refused(t, "take the coordinator's lock", "$KV.TASKD_POOL.coordinator", func(ctx context.Context) error {
		_, err := w.js.Publish(ctx, "$KV.TASKD_POOL.coordinator", []byte(`{"host": "rogue"}`))
		return err
	})

	// A made-up end, from a trusted worker key that did not claim the
	// attempt, and unsigned: published (workers may publish ends of
	// their attempts), and ignored.
	signer, err := remote.LoadSigner(filepath.Join(c.dir, "keys", "worker5.nk"))
	if err != nil {
		t.Fatal(err)
	}
	fake, _ := json.Marshal(remote.End{Worker: "w1", List: "l", Task: "1", N: 1, Outcome: "finished",
		Result: agent.Result{Success: true, Summary: "made up by a rogue worker"}})
	m := &nats.Msg{Subject: "taskd.run." + id + ".end", Data: fake}
	signer.Sign(m)
	m.Header.Set("Nats-Msg-Id", id+".fake")
	if _, err := w.js.PublishMsg(context.Background(), m); err != nil {
		t.Fatalf("publish an end (a worker may): %v", err)
	}
	if _, err := w.js.Publish(context.Background(), "taskd.run."+id+".end", fake); err != nil {
		t.Fatalf("publish an unsigned end: %v", err)
	}
	c.waitFor("the coordinator to ignore the made-up ends", 20*time.Second, func() bool {
		out := c.coord.out.String()
		return strings.Contains(out, "ignoring a report of an attempt another worker claimed") &&
			strings.Contains(out, "the message is not signed")
	})
	if tf := c.read("l", "1"); tf == nil || task.Of(tf) != task.Running {
		t.Fatalf("a made-up end moved the task on: %s", tf.Raw())
	}

	// Work signed by a key the workers do not trust, published with the
	// coordinator's credentials: refused by the worker, never run.
	rogueKey := filepath.Join(t.TempDir(), "rogue.nk")
	if _, _, err := remote.Keygen(rogueKey); err != nil {
		t.Fatal(err)
	}
	rs, _ := remote.LoadSigner(rogueKey)
	co := newRogue(t, c, "coordinator", coordinatorPassword, "_INBOX.taskd.coordinator.rogue")
	forged, _ := json.Marshal(remote.Work{ID: "Forged00000000000001", List: "l", Task: "1", N: 9, Profile: "exec", Prompt: "id > " + pwned, Cwd: work, Sent: time.Now()})
	fm := &nats.Msg{Subject: "taskd.work.exec.-.Forged00000000000001", Data: forged}
	rs.Sign(fm)
	if _, err := co.js.PublishMsg(context.Background(), fm); err != nil {
		t.Fatal(err)
	}
	c.waitFor("w1 to refuse the forged attempt", 20*time.Second, func() bool {
		return strings.Contains(c.workers["w1"].out.String(), "refusing an attempt")
	})

	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c.waitState("l", []string{"1"}, task.Succeeded, 30*time.Second)
	if s, _ := c.read("l", "1").Metadata.Object("taskd").Object("result").String("summary"); s != "the real summary" {
		t.Errorf("summary = %q, want the agent's", s)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Errorf("a hand-made or forged attempt ran")
	}
	checkRecordedOnce(t, c.events("l"))
	// What the attack would have changed is as the coordinator made it.
	info, err := co.js.Stream(context.Background(), "TASKD_WORK")
	if err != nil {
		t.Fatal(err)
	}
	if subj := info.CachedInfo().Config.Subjects; len(subj) != 1 || subj[0] != "taskd.work.>" {
		t.Errorf("the work stream's subjects = %v", subj)
	}
}

// remoteOf is the remote attempt id and worker cmd.json of run folder run
// names.
func remoteOf(run string) (id, worker string) {
	data, err := os.ReadFile(filepath.Join(run, "cmd.json"))
	if err != nil {
		return "", ""
	}
	var cmd struct {
		Remote struct {
			Attempt, Worker string
		} `json:"remote"`
	}
	json.Unmarshal(data, &cmd)
	return cmd.Remote.Attempt, cmd.Remote.Worker
}

// Ensure a worker whose key the coordinator does not trust gets nothing
// recorded: the attempt it claims stays running, its task says which
// worker and key took it, taskd workers marks the worker untrusted; once
// the operator adds the key and restarts the coordinator, the attempt's
// result is recorded.
func TestRemote_UntrustedWorker(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	key := filepath.Join(c.dir, "keys", "stranger.nk")
	pub, _, err := remote.Keygen(key)
	if err != nil {
		t.Fatal(err)
	}
	config := c.workerConfig("stranger", nil)
	data, _ := os.ReadFile(config)
	os.WriteFile(config, []byte(strings.Replace(string(data), `worker0.nk`, `stranger.nk`, 1)), 0o600)
	p := &proc{name: "stranger", args: []string{taskdBinary(t), "worker", "--config", config, "--name", "stranger",
		"--state", filepath.Join(c.dir, "state-stranger"), "--heartbeat", "500ms", "--profiles", "exec"}}
	c.workers["stranger"] = p
	c.start(p)
	c.drop("l", "1", execTask(`echo '{"success": true, "summary": "ran on the stranger"}'`, t.TempDir(), nil))
	c.waitFor("the task to say an untrusted worker claimed it", time.Minute, func() bool {
		s, _ := c.read("l", "1").Metadata.Object("taskd").String("dispatch")
		return strings.Contains(s, "claimed by worker stranger") && strings.Contains(s, pub)
	})
	if out, _ := c.taskdIn("workers", "--config", c.config); !lineWith(out, "stranger", "untrusted") {
		t.Errorf("taskd workers does not mark the stranger untrusted:\n%s", out)
	}
	if st := task.Of(c.read("l", "1")); st != task.Running {
		t.Fatalf("the task is %s: an untrusted worker's end was recorded", st)
	}
	c.kill(c.coord)
	c.editConfig(func(cfg map[string]any) {
		n := cfg["nats"].(map[string]any)
		n["workerKeys"] = append(n["workerKeys"].([]any), pub)
	})
	c.restart(c.coord)
	c.waitState("l", []string{"1"}, task.Succeeded, time.Minute)
	if s, _ := c.read("l", "1").Metadata.Object("taskd").Object("result").String("summary"); s != "ran on the stranger" {
		t.Errorf("summary = %q", s)
	}
}
