package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestHostile_DirectorySwapped: another process keeps exchanging a
// directory of the project with a link to a directory outside
// (renameat2 RENAME_EXCHANGE, atomic) while the session has Diagram,
// CopyAgents and CopyWorkflows write into it. Each write lands in the
// project or is refused; nothing, not even a temporary file, is made
// outside, whichever way the exchange falls between the check of the
// path and the write.
func TestHostile_DirectorySwapped(t *testing.T) {
	e := newEnv(t, envOpts{})
	outside := t.TempDir()
	sub, swap := filepath.Join(e.project, "sub"), filepath.Join(e.project, "swap")
	must(t, os.MkdirAll(filepath.Join(sub, ".flow"), 0o755))
	must(t, os.Symlink(outside, swap))
	stop := swapping(t, sub, swap)
	defer stop()
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"Diagram", map[string]any{"workflowType": "quick-task", "filePath": "sub/d.md"}},
		{"Diagram", map[string]any{"workflowType": "quick-task", "filePath": "sub/new/d.md"}},
		{"CopyAgents", map[string]any{"agentIds": []string{"developer"}, "targetDir": "sub/agents"}},
	}
	written := 0
	deadline := time.Now().Add(2 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		c := calls[n%len(calls)]
		if text, isErr := e.call(c.tool, c.args); !isErr && !strings.Contains(text, `"error"`) {
			written++
		}
		if entries, _ := os.ReadDir(outside); len(entries) > 0 {
			t.Fatalf("after %d calls, %s wrote outside the project: %s holds %s", n+1, c.tool, outside, entries[0].Name())
		}
	}
	if written == 0 {
		t.Error("no call wrote anything: the test did not test")
	}
}

// TestHostile_WorkflowsSwapped: another process keeps exchanging the
// project's .flow/workflows with a link to a directory outside that holds
// a workflow of the same id, while the session lists and navigates the
// project's workflows. What the server reads is the project's file or
// nothing: never the one outside.
func TestHostile_WorkflowsSwapped(t *testing.T) {
	e := newEnv(t, envOpts{})
	outside := t.TempDir()
	write(t, filepath.Join(outside, "x.json"), strings.Replace(ctxWorkflow, `"name": "Context"`, `"name": "OUTSIDE"`, 1))
	flow := filepath.Join(e.project, ".flow")
	write(t, filepath.Join(flow, "workflows", "x.json"), ctxWorkflow)
	must(t, os.Symlink(outside, filepath.Join(flow, "swap")))
	stop := swapping(t, filepath.Join(flow, "workflows"), filepath.Join(flow, "swap"))
	defer stop()
	read := 0
	deadline := time.Now().Add(2 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		text, _ := e.call("ListWorkflows", map[string]any{"source": "project"})
		if strings.Contains(text, "OUTSIDE") {
			t.Fatalf("after %d calls, the server read the workflow outside the project: %s", n+1, text)
		}
		if strings.Contains(text, "Context") {
			read++
		}
	}
	if read == 0 {
		t.Error("no call read the project's workflow: the test did not test")
	}
}

// swapping keeps exchanging a and b (renameat2 RENAME_EXCHANGE) until the
// function it returns is called.
func swapping(t *testing.T, a, b string) (stop func()) {
	t.Helper()
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			default:
			}
			unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
		}
	}()
	return func() { close(quit); <-done }
}
