package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/internal/claudestub"
	"github.com/taskd/taskd/taskfile"
)

// TestStatus_RealClaudeReportedFailure: a claude agent (the real Claude
// Code CLI against the loopback stub) that runs a command and then
// reports failure in its own words exits 0; the task fails, and its error
// — what taskd status, show and wait say — is the agent's reason, not
// "the agent failed (exit status 0)".
func TestStatus_RealClaudeReportedFailure(t *testing.T) {
	isolate(t)
	bin := claudestub.Binary(t)
	root := filepath.Join(t.TempDir(), "tasks")
	const reason = "no Makefile: the tests cannot run"
	stub := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		if strings.Contains(body, `"tool_result"`) {
			return claudestub.Turn{Text: `There is no Makefile here. {"success": false, "summary": "` + reason + `"}`}
		}
		return claudestub.Turn{Bash: "echo no Makefile"}
	})
	startTestDaemon(t, root, &config.FileConfig{Profiles: map[string]config.ProfileSpec{"claude": {
		Command: []string{bin, "-p", "--output-format", "stream-json", "--verbose"}, Prompt: "stdin", Output: "claude-stream",
		Env: stub.Env(t), Timeout: "2m",
	}}})
	if _, errOut, code := runCLI(t, "submit", "--root", root, "--list", "demo", "--cwd", t.TempDir(),
		"--tools", "Bash(echo:*)", "Run the tests and fix what fails."); code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	out, errOut, code := runCLI(t, "wait", "--root", root, "--timeout", "3m", "demo/1")
	if code != 1 {
		t.Fatalf("wait: exit %d, want 1: %s %s", code, out, errOut)
	}
	tf, err := taskfile.ReadFile(filepath.Join(root, "demo", "1.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := tf.Metadata.Object("taskd").String("error")
	if !strings.Contains(got, reason) || strings.Contains(got, "exit status 0") {
		t.Errorf("metadata.taskd.error = %q, want the agent's reason %q", got, reason)
	}
	status, _, _ := runCLI(t, "status", "--root", root, "demo/1")
	if !strings.Contains(strings.Join(strings.Fields(status), " "), "error: the agent reported failure: "+reason) {
		t.Errorf("taskd status does not give the agent's reason:\n%s", status)
	}
}
