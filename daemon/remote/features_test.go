package remote_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Ensure a cancel reaches the worker: the agent's process group is stopped
// there, and the task is recorded cancelled long before its script would
// have ended.
func TestRemote_CancelReachesWorker(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	c.worker("w1", "--profiles", "exec")
	work := t.TempDir()
	pidFile := filepath.Join(work, "pid")
	c.drop("l", "1", execTask("sleep 60 & echo $! > "+pidFile+"; wait", work, nil))
	var pid int
	c.waitFor("the agent to start on the worker", 30*time.Second, func() bool {
		data, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil && pid > 0
	})
	dir, err := taskfile.Open(c.listDir("l"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dir.Update(context.Background(), "1", func(tf *taskfile.Task) error {
		tf.Metadata.Object("taskd").Set("cancel", true)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c.waitState("l", []string{"1"}, task.Cancelled, 20*time.Second)
	c.waitFor("the agent's child to be gone", 10*time.Second, func() bool {
		return syscall.Kill(pid, 0) != nil
	})
	res, _ := os.ReadFile(filepath.Join(c.listDir("l"), ".taskd", "runs", "1", "1", "result.json"))
	if !strings.Contains(string(res), `"outcome": "cancelled"`) {
		t.Errorf("result.json = %s", res)
	}
}

// Ensure the agent's output reaches the coordinator's stdout.log while the
// agent runs, and a timeout set in the task stops it on the worker.
func TestRemote_OutputStreamsAndTimeout(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	c.worker("w1", "--profiles", "exec")
	work := t.TempDir()
	c.drop("l", "1", execTask("echo first; sleep 60; echo never", work, map[string]any{"taskd.timeout": "4s"}))
	out := filepath.Join(c.listDir("l"), ".taskd", "runs", "1", "1", "stdout.log")
	c.waitFor("the first line in the coordinator's stdout.log while the agent runs", 20*time.Second, func() bool {
		data, _ := os.ReadFile(out)
		t := c.read("l", "1")
		return string(data) == "first\n" && t != nil && task.Of(t) == task.Running
	})
	c.waitState("l", []string{"1"}, task.TimedOut, 30*time.Second)
	if data, _ := os.ReadFile(out); string(data) != "first\n" {
		t.Errorf("stdout.log = %q, want %q", data, "first\n")
	}
}

// Ensure a worker runs an attempt in the coordinator's directory mapped
// by --dir-map, and in a worktree of metadata.taskd.repo at its ref.
func TestRemote_WorkingDirectories(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	coordDir, workerDir := t.TempDir(), t.TempDir()
	c.worker("w1", "--profiles", "exec", "--dir-map", coordDir+"="+workerDir)

	repo := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"},
	} {
		gitRun(t, repo, args...)
	}
	os.WriteFile(filepath.Join(repo, "README"), []byte("first\n"), 0o644)
	gitRun(t, repo, "add", "README")
	gitRun(t, repo, "commit", "-q", "-m", "first")
	gitRun(t, repo, "tag", "v1")
	os.WriteFile(filepath.Join(repo, "README"), []byte("second\n"), 0o644)
	gitRun(t, repo, "commit", "-q", "-am", "second")

	marks := t.TempDir()
	c.drop("l", "mapped", execTask("pwd > where", coordDir, nil))
	c.drop("l", "cloned", execTask("cat README > "+filepath.Join(marks, "readme")+"; git rev-parse --is-inside-work-tree > "+filepath.Join(marks, "tree"),
		coordDir, map[string]any{"taskd.repo": repo, "taskd.ref": "v1"}))
	c.drop("l", "missing", execTask("true", "/nonexistent/dir", nil))
	c.waitState("l", []string{"mapped", "cloned"}, task.Succeeded, 30*time.Second)
	if where, _ := os.ReadFile(filepath.Join(workerDir, "where")); strings.TrimSpace(string(where)) != workerDir {
		t.Errorf("the mapped task ran in %q, want %q", where, workerDir)
	}
	if data, _ := os.ReadFile(filepath.Join(marks, "readme")); string(data) != "first\n" {
		t.Errorf("the cloned task read README %q at v1, want %q", data, "first\n")
	}
	if data, _ := os.ReadFile(filepath.Join(marks, "tree")); strings.TrimSpace(string(data)) != "true" {
		t.Errorf("the cloned task did not run in a git work tree: %q", data)
	}
	// The cloned attempt's own folder, its worktree's, goes with it; the
	// others made none.
	attempts := filepath.Join(c.dir, "state-w1", "attempts")
	c.waitFor("the worker to remove the cloned attempt's folder", 30*time.Second, func() bool {
		entries, err := os.ReadDir(attempts)
		if err != nil {
			return false
		}
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), "list-") {
				return false
			}
		}
		return true
	})
	c.waitState("l", []string{"missing"}, task.Failed, 30*time.Second)
	if msg, _ := c.read("l", "missing").Metadata.Object("taskd").String("error"); !strings.Contains(msg, "--dir-map") {
		t.Errorf("a missing directory's error %q does not say how to map it", msg)
	}
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// Ensure profiles and lists named in nats.local run on the coordinator's
// machine, with no worker at all.
func TestRemote_LocalStaysLocal(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l", "here"}, map[string]any{
		"profiles": map[string]any{"sh": map[string]any{"command": []string{"sh", "-c"}, "prompt": "arg"}},
	})
	// Rewrite the configuration with a local list: the coordinator reads
	// it at start.
	c.kill(c.coord)
	c.editConfig(func(cfg map[string]any) {
		cfg["nats"].(map[string]any)["local"] = []string{"sh", "here"}
	})
	c.restart(c.coord)
	work := t.TempDir()
	c.drop("l", "1", execTask("true", work, map[string]any{"taskd.agent": "sh"}))
	c.drop("here", "2", execTask("true", work, nil))
	c.waitState("l", []string{"1"}, task.Succeeded, 20*time.Second)
	c.waitState("here", []string{"2"}, task.Succeeded, 20*time.Second)
	for _, run := range []string{filepath.Join(c.listDir("l"), ".taskd/runs/1/1"), filepath.Join(c.listDir("here"), ".taskd/runs/2/1")} {
		cmd, _ := os.ReadFile(filepath.Join(run, "cmd.json"))
		if strings.Contains(string(cmd), `"remote"`) || !strings.Contains(string(cmd), `"pid"`) {
			t.Errorf("%s ran remotely:\n%s", run, cmd)
		}
	}
}

// Ensure a result for an attempt no task expects is dropped, with a log
// line, and changes no task.
func TestRemote_UnexpectedResultDropped(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	c.worker("w1", "--profiles", "exec")
	c.drop("l", "1", execTask("true", t.TempDir(), nil))
	c.waitState("l", []string{"1"}, task.Succeeded, 20*time.Second)
	before := c.read("l", "1").Raw()

	// A worker the coordinator trusts publishes an end of an attempt
	// nobody sent.
	nc, err := remote.Connect(remote.Dial{URL: c.nats.URL(), NATS: &config.NATS{User: "worker", Password: workerPassword}, Name: "test", Inbox: remote.WorkerInbox("taskd", "test"), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	signer, err := remote.LoadSigner(filepath.Join(c.dir, "keys", "worker0.nk"))
	if err != nil {
		t.Fatal(err)
	}
	client, err := remote.NewClient(nc, "taskd", signer)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := json.Marshal(remote.End{Worker: "stranger", List: "l", Task: "1", N: 1, Outcome: "finished"})
	if _, err := client.Publish(context.Background(), "LateAttempt0000000001", remote.KindEnd, remote.Message{Data: end}); err != nil {
		t.Fatal(err)
	}
	c.waitFor("the coordinator to drop the result with a log line", 10*time.Second, func() bool {
		return strings.Contains(c.coord.out.String(), "dropping a result no task expects") &&
			strings.Contains(c.coord.out.String(), "LateAttempt0000000001")
	})
	if after := c.read("l", "1").Raw(); string(after) != string(before) {
		t.Errorf("the task changed:\n%s\nwant\n%s", after, before)
	}
}

// coordinatorClient is a client of the cluster's server with the
// coordinator's credentials and key.
func (c *cluster) coordinatorClient() *remote.Client {
	c.t.Helper()
	nc, err := remote.Connect(remote.Dial{URL: c.nats.URL(), NATS: &config.NATS{User: "coordinator", Password: coordinatorPassword}, Name: "test", Inbox: remote.CoordinatorInbox("taskd"), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(nc.Close)
	signer, err := remote.LoadSigner(filepath.Join(c.dir, "keys", "coordinator.nk"))
	if err != nil {
		c.t.Fatal(err)
	}
	client, err := remote.NewClient(nc, "taskd", signer)
	if err != nil {
		c.t.Fatal(err)
	}
	return client
}

// remoteAttempt waits until cmd.json of run folder list/.taskd/runs/id/n
// names the remote attempt it was sent as, and returns its id.
func (c *cluster) remoteAttempt(list, id string, n int) string {
	c.t.Helper()
	var attempt string
	c.waitFor("the attempt to be sent", 30*time.Second, func() bool {
		data, _ := os.ReadFile(filepath.Join(c.listDir(list), ".taskd", "runs", id, itoa(n), "cmd.json"))
		var cmd struct {
			Remote struct {
				Attempt string `json:"attempt"`
			} `json:"remote"`
		}
		_ = json.Unmarshal(data, &cmd)
		attempt = cmd.Remote.Attempt
		return attempt != ""
	})
	return attempt
}

// Ensure a cancel its coordinator stored before any worker took the
// attempt keeps its agent from starting: the worker reads it while it
// claims the attempt.
func TestRemote_CancelBeforeClaimKeepsAgentFromStarting(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	work := t.TempDir()
	c.drop("l", "1", execTask("touch ran", work, nil))
	id := c.remoteAttempt("l", "1", 1)
	client := c.coordinatorClient()
	c.waitFor("the attempt to be queued", 30*time.Second, func() bool {
		data, _ := os.ReadFile(filepath.Join(c.listDir("l"), ".taskd", "runs", "1", "1", "cmd.json"))
		return strings.Contains(string(data), `"state": "queued"`)
	})
	// Stored as the coordinator stores a cancel, with the work still
	// queued: as when a task is cancelled while a worker takes it.
	cancel, _ := json.Marshal(remote.Cancel{Reason: remote.CancelReason})
	if _, err := client.Publish(context.Background(), id, remote.KindCancel, remote.Message{Data: cancel, ID: id + ".cancel"}); err != nil {
		t.Fatal(err)
	}
	c.worker("w1", "--profiles", "exec")
	result := filepath.Join(c.listDir("l"), ".taskd", "runs", "1", "1", "result.json")
	c.waitFor("the attempt's result", 30*time.Second, func() bool {
		_, err := os.Stat(result)
		return err == nil
	})
	res, _ := os.ReadFile(result)
	if !strings.Contains(string(res), "cancelled before it started") {
		t.Errorf("result.json = %s, want the attempt cancelled before it started\n%s", res, c.logs())
	}
	if _, err := os.Stat(filepath.Join(work, "ran")); err == nil {
		t.Errorf("the agent ran, though its attempt was cancelled before a worker claimed it")
	}
}

// Ensure a worker keeps the list directory of an ended attempt for the
// next one, its run folders removed, and none that an agent left
// something in: what one attempt leaves never reaches another.
func TestRemote_WorkerReusesOnlyEmptyListDirectories(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{"l"}, nil)
	c.worker("w1", "--profiles", "exec", "--concurrency", "1")
	work := t.TempDir()
	scripts := []string{
		`echo "$TASKD_RUN_DIR" > dir1; touch "$TASKD_RUN_DIR/../../../../stray"`,
		`echo "$TASKD_RUN_DIR" > dir2; ls -A "$TASKD_RUN_DIR/../../../.." > seen2`,
		`echo "$TASKD_RUN_DIR" > dir3; ls -A "$TASKD_RUN_DIR/../../../.." > seen3`,
	}
	for i, script := range scripts {
		id := itoa(i + 1)
		c.drop("l", id, execTask(script, work, nil))
		c.waitState("l", []string{id}, task.Succeeded, 30*time.Second)
	}
	listOf := func(n int) string {
		data, err := os.ReadFile(filepath.Join(work, "dir"+itoa(n)))
		if err != nil {
			t.Fatal(err)
		}
		// The run folder is <list>/.taskd/runs/<task>/<attempt>.
		return filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(strings.TrimSpace(string(data))))))
	}
	for _, n := range []int{2, 3} {
		if seen, _ := os.ReadFile(filepath.Join(work, "seen"+itoa(n))); strings.TrimSpace(string(seen)) != ".taskd" {
			t.Errorf("attempt %d found in its list directory %q, want only .taskd", n, seen)
		}
	}
	if listOf(2) == listOf(1) {
		t.Errorf("the list directory an agent left a file in was used again: %s", listOf(1))
	}
	if _, err := os.Stat(listOf(1)); err == nil {
		t.Errorf("the list directory an agent left a file in is still there: %s", listOf(1))
	}
	if listOf(3) != listOf(2) {
		t.Errorf("the list directory of attempt 3 is %s, want that of attempt 2 (%s), emptied", listOf(3), listOf(2))
	}
}
