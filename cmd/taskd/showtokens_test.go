package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/internal/claudestub"
)

// TestShow_RealClaudeTokens: the tokens a finished claude attempt is said
// to have used — result.json's progress, taskd show — are the ones the
// real Claude Code CLI reports in its result (the stub's messages report
// 300 output tokens each, 10 input), not the estimate from the text
// streamed meanwhile, which counts a short answer's output as a few
// tokens.
func TestShow_RealClaudeTokens(t *testing.T) {
	isolate(t)
	bin := claudestub.Binary(t)
	root := filepath.Join(t.TempDir(), "tasks")
	stub := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		if strings.Contains(body, `"tool_result"`) {
			return claudestub.Turn{Text: `Done. {"success": true, "summary": "listed"}`, OutputTokens: 300}
		}
		return claudestub.Turn{Bash: "echo listed", OutputTokens: 300}
	})
	startTestDaemon(t, root, &config.FileConfig{Profiles: map[string]config.ProfileSpec{"claude": {
		Command: []string{bin, "-p", "--output-format", "stream-json", "--verbose"}, Prompt: "stdin", Output: "claude-stream",
		Env: stub.Env(t), Timeout: "2m",
	}}})
	if _, errOut, code := runCLI(t, "submit", "--root", root, "--list", "demo", "--cwd", t.TempDir(),
		"--tools", "Bash(echo:*)", "List the files."); code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	if out, errOut, code := runCLI(t, "wait", "--root", root, "--timeout", "3m", "demo/1"); code != 0 {
		t.Fatalf("wait: exit %d: %s %s", code, out, errOut)
	}
	var res agent.Result
	data, _ := os.ReadFile(filepath.Join(root, "demo", ".taskd", "runs", "1", "1", "result.json"))
	if err := json.Unmarshal(data, &res); err != nil || res.Progress == nil {
		t.Fatalf("result.json (%v): %s", err, data)
	}
	if got, want := res.Progress.Tokens, (agent.Tokens{Input: 20, Output: 600}); got != want {
		t.Errorf("result.json progress tokens %+v, want %+v (the CLI's result)", got, want)
	}
	out, _, _ := runCLI(t, "show", "--root", root, "--json", "demo/1")
	var d status.Detail
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("show --json: %v\n%s", err, out)
	}
	if d.Last.Tokens != 620 {
		t.Errorf("show --json: %d tokens, want 620", d.Last.Tokens)
	}
}
