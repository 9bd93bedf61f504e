package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
	"github.com/taskd/taskd/taskfile"
)

// TestMCP_RealClaudeCode: the real Claude Code CLI, given the built
// taskd's MCP server with --mcp-config and allowed its submit and show
// tools, hands a task to a running daemon when its model (the loopback
// stub) calls mcp__taskd__submit: the task lands in the session's
// directory (Claude Code's working directory, which the server learns as
// the client's root), the daemon runs it there, and a later session's
// mcp__taskd__show call returns its summary to the model.
func TestMCP_RealClaudeCode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a daemon and Claude Code; skipped with -short")
	}
	claude := claudestub.Binary(t)
	bin := taskdBinary(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "tasks")
	project := filepath.Join(dir, "project")
	daemonHome := filepath.Join(dir, "home")
	for _, d := range []string{root, project, daemonHome} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}

	daemon := exec.Command(bin, "run", "--root", root)
	daemon.Env = append(os.Environ(), "HOME="+daemonHome, "XDG_CONFIG_HOME="+filepath.Join(daemonHome, ".config"), "TASKD_ROOT=", "TASKD_LIST=", "TASKD_TASK_FILE=", "TASKD_TEST_MAIN=1")
	var daemonLog lockedBuffer
	daemon.Stderr = &daemonLog
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		daemon.Process.Signal(syscall.SIGTERM)
		daemon.Wait()
		if t.Failed() {
			t.Logf("the daemon's log:\n%s", daemonLog.String())
		}
	})

	config := filepath.Join(dir, "mcp.json")
	servers, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"taskd": map[string]any{
		"command": bin, "args": []string{"mcp", "--root", root}, "env": map[string]string{"TASKD_TEST_MAIN": "1"}}}})
	if err := os.WriteFile(config, servers, 0o600); err != nil {
		t.Fatal(err)
	}
	session := func(stub *claudestub.Server, prompt string) string {
		t.Helper()
		cmd := exec.Command(claude, "-p", prompt, "--output-format", "json", "--mcp-config", config,
			"--allowedTools", "mcp__taskd__submit,mcp__taskd__show")
		cmd.Dir = project
		// Claude Code waits for its MCP servers only so long, then goes on
		// without them: on a loaded machine, longer.
		cmd.Env = append(append(os.Environ(), stub.Env(t)...), "MCP_TIMEOUT=120000", "TASKD_TEST_MAIN=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude: %v\n%s", err, out)
		}
		var res struct {
			Result  string `json:"result"`
			IsError bool   `json:"is_error"`
		}
		if err := json.Unmarshal(out, &res); err != nil || res.IsError {
			t.Fatalf("claude's answer: %v\n%s", err, out)
		}
		return res.Result
	}

	// The agent's script says where it ran.
	script := `echo "{\"success\": true, \"summary\": \"built in $(pwd)\"}"`
	var submitted string
	submit := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		if i := strings.Index(body, `"tool_result"`); i >= 0 {
			submitted = body[i:]
			return claudestub.Turn{Text: "Queued it for taskd."}
		}
		// Claude Code lists MCP tools by name (loading their schemas on
		// demand): the name is there once the server is.
		if !strings.Contains(body, "mcp__taskd__submit") {
			return claudestub.Turn{Text: "I have no submit tool."}
		}
		return claudestub.Turn{Tool: "mcp__taskd__submit", Input: map[string]any{"prompt": script, "agent": "exec", "subject": "Build it"}}
	})
	if got := session(submit, "Queue the build for taskd."); got != "Queued it for taskd." {
		t.Fatalf("the first session answered %q", got)
	}
	if !strings.Contains(submitted, `\"task\":\"default/1\"`) {
		t.Errorf("the submit tool's answer to the model: %.500s", submitted)
	}
	file := filepath.Join(root, "default", "1.json")
	tf, err := taskfile.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if cwd, _ := task.Meta(tf).String("cwd"); cwd != project {
		t.Errorf("the task runs in %q, want the session's directory %s", cwd, project)
	}

	waitUntil(t, "the daemon to run the task", 2*time.Minute, func() bool {
		tf, err := taskfile.ReadFile(file)
		return err == nil && task.Of(tf).Ended()
	})
	if tf, _ := taskfile.ReadFile(file); task.Of(tf) != task.Succeeded {
		t.Fatalf("the task ended %s", task.Of(tf))
	}

	var shown string
	show := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		if i := strings.Index(body, `"tool_result"`); i >= 0 {
			shown = body[i:]
			return claudestub.Turn{Text: "taskd says it is done."}
		}
		return claudestub.Turn{Tool: "mcp__taskd__show", Input: map[string]any{"task": "default/1"}}
	})
	if got := session(show, "How did the build go?"); got != "taskd says it is done." {
		t.Fatalf("the second session answered %q", got)
	}
	if want := `built in ` + project; !strings.Contains(shown, want) || !strings.Contains(shown, `\"state\":\"succeeded\"`) {
		t.Errorf("the show tool's answer to the model lacks %q and the state:\n%.1500s", want, shown)
	}
}
