package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/taskd/taskd/daemon/mcpserver"
	"github.com/taskd/taskd/internal/claudestub"
	"github.com/taskd/taskd/taskfile"
)

// taskdBinary returns the taskd the MCP tests start as a process of its
// own, as Claude Code starts it: this test binary, which is taskd's main
// when TASKD_TEST_MAIN=1 is in its environment (TestMain). Every process
// started from it must have that in its environment.
func taskdBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// mcpClient starts `taskd mcp ARGS…` and connects to it as a client whose
// root is project, over the process's standard input and output.
func mcpClient(t *testing.T, env []string, project string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(taskdBinary(t), append([]string{"mcp"}, args...)...)
	cmd.Env = append(env, "TASKD_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	client.AddRoots(&mcp.Root{URI: "file://" + project})
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("taskd mcp's standard error:\n%s", stderr.String())
		}
	})
	return cs
}

// callText calls a tool and returns its text.
func callText(t *testing.T, cs *mcp.ClientSession, tool string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s(%v): %v", tool, args, res.Content)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// TestMCP_ToolsList drives the built taskd mcp over its standard input
// and output as Claude Code does: initialize names the server taskd, and
// tools/list gives flow's eight tools with the input schemas mcpserver
// pins to flow's (TestNavigatorSchemas), and the daemon's eight with the
// arguments the commands take.
func TestMCP_ToolsList(t *testing.T) {
	if testing.Short() {
		t.Skip("starts taskd; skipped with -short")
	}
	isolate(t)
	env := append(os.Environ(), "HOME="+t.TempDir(), "TASKD_ROOT="+filepath.Join(t.TempDir(), "tasks"), "TASKD_LIST=")
	cs := mcpClient(t, env, t.TempDir())
	if info := cs.InitializeResult().ServerInfo; info.Name != "taskd" {
		t.Errorf("server info %+v", info)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, tool := range res.Tools {
		got[tool.Name] = jsonValue(t, tool.InputSchema)
	}
	for _, flow := range mcpserver.NavigatorTools {
		if want := jsonValue(t, flow.InputSchema); !reflect.DeepEqual(got[flow.Name], want) {
			t.Errorf("%s: schema\n got %v\nwant %v", flow.Name, got[flow.Name], want)
		}
	}
	for _, tt := range []struct {
		tool     string
		props    []string
		required []string
	}{
		{"submit", []string{"prompt", "agent", "workflow", "permissionMode", "tools", "worktree", "maxCostUsd", "cwd"}, nil},
		{"status", []string{"task", "list", "all"}, nil},
		{"show", []string{"task"}, []string{"task"}},
		{"wait", []string{"task", "timeout"}, []string{"task"}},
		{"resolve", []string{"task", "answer", "note"}, []string{"answer", "task"}},
		{"cancel", []string{"task"}, []string{"task"}},
		{"retry", []string{"task"}, []string{"task"}},
		{"logs", []string{"task", "attempt", "lines", "stderr"}, []string{"task"}},
	} {
		schema, _ := got[tt.tool].(map[string]any)
		if schema == nil {
			t.Errorf("no tool %s", tt.tool)
			continue
		}
		props, _ := schema["properties"].(map[string]any)
		for _, p := range tt.props {
			if _, ok := props[p]; !ok {
				t.Errorf("%s has no argument %s: %v", tt.tool, p, schema)
			}
		}
		var required []string
		for _, r := range anySlice(schema["required"]) {
			required = append(required, r.(string))
		}
		slices.Sort(required)
		if !slices.Equal(required, tt.required) {
			t.Errorf("%s requires %v, want %v", tt.tool, required, tt.required)
		}
	}
	if len(got) != 16 {
		t.Errorf("%d tools, want flow's eight and the daemon's eight", len(got))
	}
}

func anySlice(v any) []any { s, _ := v.([]any); return s }

// jsonValue is v as plain JSON values.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMCP_NavigateAgreesWithCLI drives the built taskd mcp over its
// standard input and output as Claude Code would: the server lists flow's
// eight tools and the daemon's eight, and a walk through a built-in
// workflow (retries, an escalation to a person, the resume, the end), on a
// task file created as flow's /flow:run creates it, gets from Navigate
// exactly what taskd navigate answers on a twin task file, which ends up
// byte for byte the same.
func TestMCP_NavigateAgreesWithCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts taskd; skipped with -short")
	}
	isolate(t)
	home := t.TempDir()
	root := filepath.Join(t.TempDir(), "tasks")
	project := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+os.Getenv("XDG_CONFIG_HOME"), "TASKD_ROOT=", "TASKD_LIST=")
	cs := mcpClient(t, env, project, "--root", root)

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, " "); got != "CopyAgents CopyWorkflows Diagram ListCatalog ListWorkflows LoadWorkflows Navigate SelectWorkflow cancel logs resolve retry show status submit wait" {
		t.Errorf("tools: %s", got)
	}

	same := func(step, mcpText, cliText string) {
		t.Helper()
		var a, b any
		if err := json.Unmarshal([]byte(mcpText), &a); err != nil {
			t.Fatalf("%s: MCP answered no JSON: %s", step, mcpText)
		}
		if err := json.Unmarshal([]byte(cliText), &b); err != nil {
			t.Fatalf("%s: taskd navigate printed no JSON: %s", step, cliText)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: the answers differ\nMCP: %s\nCLI: %s", step, mcpText, cliText)
		}
	}
	const wf, desc = "feature-development", "Add a --dry-run flag"
	start := callText(t, cs, "Navigate", map[string]any{"workflowType": wf, "description": desc})
	out, errOut, code := runCLI(t, "navigate", "--workflow", wf, "--description", desc, "--project-root", project)
	if code != 0 {
		t.Fatalf("taskd navigate: %s", errOut)
	}
	same("start", start, out)

	// The task as /flow:run's TaskCreate writes it, twice: one for each.
	var first struct {
		OrchestratorInstructions string
		Metadata                 struct{ CurrentStep string }
	}
	json.Unmarshal([]byte(start), &first)
	task := map[string]any{"id": "1", "subject": "#1 " + desc, "activeForm": "Working", "description": first.OrchestratorInstructions, "status": "pending",
		"metadata": map[string]any{"userDescription": desc, "workflowType": wf, "currentStep": first.Metadata.CurrentStep, "retryCount": 0}}
	data, _ := json.MarshalIndent(task, "", "  ")
	viaMCP, viaCLI := filepath.Join(root, "a", "1.json"), filepath.Join(root, "b", "1.json")
	writeTask(t, viaMCP, string(data))
	writeTask(t, viaCLI, string(data))
	os.Chmod(root, 0o700)

	seen := map[string]bool{}
	failures := map[string]int{}
	var path []string
	for i := 0; i < 60; i++ {
		cur := callText(t, cs, "Navigate", map[string]any{"taskFilePath": viaMCP})
		out, errOut, code := runCLI(t, "navigate", "--task", viaCLI, "--project-root", project)
		if code != 0 {
			t.Fatalf("taskd navigate: %s", errOut)
		}
		same(fmt.Sprintf("call %d, current", i), cur, out)
		var r struct{ Terminal, Action, CurrentStep string }
		json.Unmarshal([]byte(cur), &r)
		if r.Terminal == "success" {
			break
		}
		// Each step fails the first three times it comes, then passes; a
		// person's step passes.
		result := "passed"
		if r.Terminal == "" && failures[r.CurrentStep] < 3 {
			result = "failed"
			failures[r.CurrentStep]++
		}
		next := callText(t, cs, "Navigate", map[string]any{"taskFilePath": viaMCP, "result": result})
		out, errOut, code = runCLI(t, "navigate", "--task", viaCLI, "--result", result, "--project-root", project)
		if code != 0 && code != 3 {
			t.Fatalf("taskd navigate: %s", errOut)
		}
		same(fmt.Sprintf("call %d, %s at %s", i, result, r.CurrentStep), next, out)
		a, _ := os.ReadFile(viaMCP)
		b, _ := os.ReadFile(viaCLI)
		if !bytes.Equal(a, b) {
			t.Fatalf("call %d: the task files differ\nMCP: %s\nCLI: %s", i, a, b)
		}
		json.Unmarshal([]byte(next), &r)
		seen[r.Action] = true
		path = append(path, result+"→"+r.CurrentStep)
	}
	tf, err := taskfile.ReadFile(viaMCP)
	if err != nil {
		t.Fatal(err)
	}
	if step, _ := tf.Metadata.String("currentStep"); !strings.HasPrefix(step, "end") {
		t.Errorf("the walk did not end: at %s after %s", step, strings.Join(path, " "))
	}
	for _, want := range []string{"advance", "retry", "escalate"} {
		if !seen[want] {
			t.Errorf("the walk had no %s", want)
		}
	}
}

// TestMCP_Frames: a message longer than the server reads ends the
// connection with an error, not a crash or a hang; a message just within
// it is answered.
func TestMCP_Frames(t *testing.T) {
	if testing.Short() {
		t.Skip("starts taskd; skipped with -short")
	}
	isolate(t)
	env := append(os.Environ(), "HOME="+t.TempDir(), "TASKD_ROOT="+filepath.Join(t.TempDir(), "tasks"))
	cs := mcpClient(t, env, t.TempDir())
	big := strings.Repeat("x", 3<<20)
	if text := callText(t, cs, "Navigate", map[string]any{"workflowType": "quick-task", "description": big}); !strings.Contains(text, big[:100]) {
		t.Errorf("a 3 MiB description: %.200s", text)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Navigate", Arguments: map[string]any{"workflowType": "quick-task", "description": big + big}})
	if err == nil || ctx.Err() != nil {
		t.Errorf("a 6 MiB message: err %v (context %v)", err, ctx.Err())
	}
}

// TestMCPInstall: taskd mcp install prints the claude mcp add line for
// the installed binary, the .mcp.json entry with --json, and with --run
// adds the server to the real Claude Code's configuration, where claude
// mcp get finds it.
func TestMCPInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts taskd; skipped with -short")
	}
	bin := taskdBinary(t)
	home := t.TempDir()
	// TMPDIR: the real CLI that --run starts keeps a folder in it.
	env := append(os.Environ(), "HOME="+home, "TMPDIR="+t.TempDir(), "TASKD_TEST_MAIN=1")
	run := func(args ...string) string {
		cmd := exec.Command(bin, append([]string{"mcp", "install"}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("taskd mcp install %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if got, want := run(), "claude mcp add --scope user taskd -- "+bin+" mcp\n"; got != want {
		t.Errorf("the line\n got %q\nwant %q", got, want)
	}
	var entry struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(run("--json", "--name", "navigator", "--scope", "project")), &entry); err != nil {
		t.Fatal(err)
	}
	if s := entry.MCPServers["navigator"]; s.Command != bin || strings.Join(s.Args, " ") != "mcp" {
		t.Errorf(".mcp.json entry %+v", entry)
	}
	for _, args := range [][]string{{"mcp", "install", "--scope", "everyone"}, {"mcp", "install", "--json", "--run"}, {"mcp", "--navigator", "--daemon"}, {"mcp", "extra"}} {
		if _, _, code := runCLI(t, args...); code != 2 {
			t.Errorf("taskd %v: exit %d, want a usage error", args, code)
		}
	}

	claude := claudestub.Binary(t)
	env = append(env, "PATH="+filepath.Dir(claude)+string(os.PathListSeparator)+os.Getenv("PATH"))
	run("--run")
	get := exec.Command(claude, "mcp", "get", "taskd")
	get.Env = env
	out, err := get.CombinedOutput()
	if err != nil || !strings.Contains(string(out), bin) {
		t.Errorf("claude mcp get taskd: %v\n%s", err, out)
	}
}
