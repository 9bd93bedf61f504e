package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLogs_NoSuchTask: taskd logs of a task that does not exist (a typo,
// a task removed) says so, and so does logs -f, at once: it does not
// wait for that task's output forever, nor say the task "has not run
// yet".
func TestLogs_NoSuchTask(t *testing.T) {
	isolate(t)
	root := filepath.Join(t.TempDir(), "tasks")
	startTestDaemon(t, root, nil)
	mustCLI(t, "submit", "--root", root, "--list", "l", "--agent", "exec", "echo hello")
	if out, errOut, code := runCLI(t, "wait", "--root", root, "--timeout", "1m", "l/1"); code != 0 {
		t.Fatalf("wait: exit %d: %s %s", code, out, errOut)
	}
	for _, args := range [][]string{{"logs", "--root", root, "l/7"}, {"logs", "--root", root, "-f", "l/7"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var out, errOut bytes.Buffer
		err := run(ctx, args, &out, &errOut)
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Errorf("taskd %s waited for a task that does not exist", strings.Join(args, " "))
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "no task l/7") {
			t.Errorf("taskd %s: error %v, want \"no task l/7\"", strings.Join(args, " "), err)
		}
	}
	if out := mustCLI(t, "logs", "--root", root, "l/1"); out != "hello\n" {
		t.Errorf("logs l/1 = %q", out)
	}
}
