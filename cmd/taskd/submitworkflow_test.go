package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/internal/claudestub"
)

// TestSubmit_WorkflowKeepsPrompt: `taskd submit --workflow ID --subject S
// PROMPT` gives the workflow's steps the prompt, not the subject alone:
// the real Claude Code CLI (against the loopback stub) is asked with it,
// and it is in the step's prompt.md. The workflow's first write replaces
// the description, so a prompt that is not in userDescription is lost.
func TestSubmit_WorkflowKeepsPrompt(t *testing.T) {
	isolate(t)
	bin := claudestub.Binary(t)
	root := filepath.Join(t.TempDir(), "tasks")
	const prompt = "Write greeting.txt saying hello, world (GREETING-4711)."
	stub := claudestub.New(t, func(int, string) claudestub.Turn {
		return claudestub.Turn{Text: `Done. {"success": true, "summary": "step done"}`}
	})
	startTestDaemon(t, root, &config.FileConfig{Profiles: map[string]config.ProfileSpec{"claude": {
		Command: []string{bin, "-p", "--output-format", "stream-json", "--verbose"}, Prompt: "stdin", Output: "claude-stream",
		Env: stub.Env(t), Timeout: "2m",
	}}})
	if _, errOut, code := runCLI(t, "submit", "--root", root, "--list", "demo", "--cwd", t.TempDir(),
		"--workflow", "quick-task", "--subject", "Add a greeting", prompt); code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	if out, errOut, code := runCLI(t, "wait", "--root", root, "--timeout", "3m", "demo/1"); code != 0 {
		t.Fatalf("wait: exit %d: %s %s", code, out, errOut)
	}
	bodies := stub.Bodies()
	if len(bodies) == 0 || !strings.Contains(bodies[0], "GREETING-4711") {
		t.Errorf("the work step's agent was not given the prompt %q", prompt)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "demo", ".taskd", "runs", "1", "1", "prompt.md")); !strings.Contains(string(data), prompt) {
		t.Errorf("prompt.md of the work step lacks the prompt:\n%s", data)
	}
}
