package remote_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
	"github.com/taskd/taskd/internal/syncbuf"
)

// Ensure a claude attempt a worker runs — the real Claude Code CLI against
// the loopback stub, on the worker — looks on the coordinator as a local
// one does: while it runs, `taskd logs -f` prints its readable transcript
// (the Bash tool it called and what that printed) and `taskd status` its
// progress and the worker it runs on; after it, `taskd logs` prints the
// whole transcript, and the session is the one taskd gave it.
func TestRemote_ClaudeLooksLocal(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	release := make(chan struct{})
	stub := claudestub.New(t, func(n int, body string) claudestub.Turn {
		if n == 1 {
			return claudestub.Turn{Bash: "echo remote-check-ok"}
		}
		return claudestub.Turn{Text: "All done on the worker.", Hold: release}
	})
	c := newCluster(t, []string{"l"}, nil)
	env := append(stub.Env(t), "DISABLE_AUTOUPDATER=1")
	c.workerWith("w1", map[string]any{"profiles": map[string]any{"claude": map[string]any{
		"command": []string{bin, "-p", "--output-format", "stream-json", "--verbose"},
		"prompt":  "stdin", "output": "claude-stream", "env": env, "timeout": "3m",
	}}}, "--profiles", "claude")
	work := t.TempDir()
	c.drop("l", "1", `{"subject": "remote claude", "owner": "taskd", "metadata": {"taskd": {"agent": "claude", "prompt": "Run the check.", "cwd": "`+work+`", "tools": ["Bash(echo:*)"]}}}`)

	logs := exec.Command(taskdBinary(t), "logs", "--root", c.root, "-f", "l/1")
	logs.Env = append(os.Environ(), "HOME="+filepath.Join(c.dir, "home"), "TASKD_ROOT=")
	var out syncbuf.Buffer
	logs.Stdout, logs.Stderr = &out, &out
	if err := logs.Start(); err != nil {
		t.Fatal(err)
	}
	logsDone := make(chan error, 1)
	go func() { logsDone <- logs.Wait() }()
	t.Cleanup(func() { logs.Process.Kill() })

	c.waitFor("taskd logs -f to show the tool the remote agent ran, while it runs", 2*time.Minute, func() bool {
		tf := c.read("l", "1")
		return strings.Contains(out.String(), "remote-check-ok") && tf != nil && task.Of(tf) == task.Running
	})
	status, _ := exec.Command(taskdBinary(t), "status", "--root", c.root).CombinedOutput()
	for _, want := range []string{"on worker w1", "turn "} {
		if !strings.Contains(string(status), want) {
			t.Errorf("taskd status of the running remote agent does not say %q:\n%s", want, status)
		}
	}
	close(release)
	c.waitState("l", []string{"1"}, task.Succeeded, 2*time.Minute)
	select {
	case <-logsDone:
	case <-time.After(30 * time.Second):
		t.Fatalf("taskd logs -f did not return when the task ended:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "All done on the worker.") {
		t.Errorf("taskd logs -f did not print the agent's last words:\n%s", out.String())
	}
	t.Logf("taskd logs -f printed:\n%s", out.String())
	after, err := exec.Command(taskdBinary(t), "logs", "--root", c.root, "l/1").CombinedOutput()
	if err != nil || !bytes.Contains(after, []byte("remote-check-ok")) || !bytes.Contains(after, []byte("All done on the worker.")) {
		t.Errorf("taskd logs after the run (%v):\n%s", err, after)
	}
	show, err := exec.Command(taskdBinary(t), "show", "--root", c.root, "l/1").CombinedOutput()
	for _, want := range []string{"All done on the worker.", "tool: Bash echo remote-check-ok", "turns"} {
		if err != nil || !bytes.Contains(show, []byte(want)) {
			t.Errorf("taskd show of the remote run does not say %q (%v):\n%s", want, err, show)
		}
	}
	run := filepath.Join(c.listDir("l"), ".taskd", "runs", "1", "1")
	cmd, _ := os.ReadFile(filepath.Join(run, "cmd.json"))
	res, _ := os.ReadFile(filepath.Join(run, "result.json"))
	if !strings.Contains(string(cmd), `"--session-id"`) {
		t.Errorf("the worker did not give claude the session taskd chose:\n%s", cmd)
	}
	if !strings.Contains(string(res), `"sessionId"`) || !strings.Contains(string(res), "All done on the worker.") {
		t.Errorf("result.json = %s", res)
	}
}
