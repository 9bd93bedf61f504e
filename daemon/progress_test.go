package daemon_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
	"github.com/taskd/taskd/taskfile"
)

// progressOf reads metadata.taskd.progress of t.
func progressOf(t *taskfile.Task) (agent.Progress, bool) {
	var p agent.Progress
	v, ok := t.Metadata.Object("taskd").Get("progress")
	if !ok {
		return p, false
	}
	return p, json.Unmarshal(taskfile.AppendJSON(nil, v), &p) == nil
}

// TestClaude_ProgressWhileRunning: the real Claude Code CLI, streaming
// (stream-json), runs a two-turn task whose second answer the stub holds
// back until the test has seen the first turn's progress in the task file
// and in `taskd logs -f` (a real taskd process following the readable
// transcript); then the task succeeds with the stream's result, session
// and cost, and stdout.log holds the raw stream.
func TestClaude_ProgressWhileRunning(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	hold := make(chan struct{})
	stub := claudestub.New(t, func(n int, body string) claudestub.Turn {
		if n == 1 {
			return claudestub.Turn{Bash: "echo step one"}
		}
		return claudestub.Turn{Hold: hold, Text: `All done. {"success": true, "summary": "two turns"}`}
	})
	h := startDaemonWithCLI(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = streamingClaude(t, bin, stub, config.ProfileSpec{})
	})
	h.drop("l", "1", `{"subject": "two turns", "owner": "taskd", "metadata": {"taskd": {"agent": "claude", "cwd": "`+t.TempDir()+`", "tools": ["Bash"], "prompt": "Say something, run a command, then finish."}}}`)

	logs := &syncBuffer{}
	follow := exec.Command(taskdBinary(t), "logs", "-f", "--root", h.root, "l/1")
	follow.Stdout, follow.Stderr = logs, logs
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	followed := make(chan error, 1)
	go func() { followed <- follow.Wait() }()
	t.Cleanup(func() {
		follow.Process.Kill()
		<-followed
	})

	var p agent.Progress
	h.waitFor("the first turn's progress in the task file", time.Minute, func() bool {
		tf := h.read("l", "1")
		var ok bool
		p, ok = progressOf(tf)
		return ok && task.Of(tf) == task.Running && p.Turns >= 1 && p.LastTool == "Bash echo step one"
	})
	if p.SessionID == "" || p.Tokens.Input == 0 || p.CostUSD <= 0 || !p.Estimated || p.Attempt != 1 {
		t.Errorf("progress while running = %+v", p)
	}
	h.waitFor("taskd logs -f to show the tool call", time.Minute, func() bool {
		return strings.Contains(logs.String(), "tool: Bash echo step one")
	})
	if stub.Replies() != 1 || task.Of(h.read("l", "1")) != task.Running {
		t.Fatalf("the run went on before the test let it: %d replies, state %s", stub.Replies(), task.Of(h.read("l", "1")))
	}
	close(hold)

	tf := h.waitState("l", "1", task.Succeeded, time.Minute)
	select {
	case err := <-followed:
		followed <- err
		if err != nil {
			t.Errorf("taskd logs -f: %v\n%s", err, logs)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("taskd logs -f did not return when the task ended:\n%s", logs)
	}
	for _, want := range []string{"session ", "tool: Bash echo step one", "  result: step one", "assistant: All done.", "done · 2 turns"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("taskd logs -f lacks %q:\n%s", want, logs)
		}
	}
	var res agent.Result
	json.Unmarshal(h.runFile("l", "1", 1, "result.json"), &res)
	if !res.Success || res.Summary != "two turns" || res.SessionID != p.SessionID || res.CostUSD == nil || res.Turns != 2 {
		t.Errorf("result = %+v", res)
	}
	final, _ := progressOf(tf)
	if final.Turns != 2 || final.Estimated || res.CostUSD == nil || final.CostUSD != *res.CostUSD {
		t.Errorf("final progress %+v, result cost %v", final, res.CostUSD)
	}
	raw := string(h.runFile("l", "1", 1, "stdout.log"))
	if !strings.HasPrefix(raw, `{"type":"system","subtype":"init"`) || !strings.Contains(raw, `"type":"result"`) {
		t.Errorf("stdout.log is not the raw stream:\n%.300s", raw)
	}
	var cmd struct {
		Argv      []string
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(h.runFile("l", "1", 1, "cmd.json"), &cmd)
	if cmd.SessionID != res.SessionID || !strings.Contains(strings.Join(cmd.Argv, " "), "--output-format stream-json --verbose") {
		t.Errorf("cmd.json: session %q argv %q", cmd.SessionID, cmd.Argv)
	}
	out, err := exec.Command(taskdBinary(t), "logs", "--raw", "--root", h.root, "l/1").Output()
	if err != nil || string(out) != raw {
		t.Errorf("taskd logs --raw = %.200q, %v; want stdout.log", out, err)
	}
}
