package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/waitfor"
	"github.com/taskd/taskd/taskfile"
)

// startTestDaemon runs a daemon on root until the test ends.
func startTestDaemon(t *testing.T, root string, fc *config.FileConfig) {
	t.Helper()
	cfg, err := config.NewConfig(root, nil, fc)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dir = t.TempDir()
	cfg.StateDir = t.TempDir()
	d := daemon.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
	})
	select {
	case <-d.Started():
	case err := <-done:
		t.Fatalf("daemon: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the daemon did not start within 10s")
	}
}

// waitUntil waits for cond, failing the test after timeout.
func waitUntil(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	waitfor.Cond(t, what, timeout, cond)
}

func stateIn(t *testing.T, root, list, id string) task.State {
	t.Helper()
	tf, err := taskfile.ReadFile(filepath.Join(root, list, id+".json"))
	if err != nil {
		return ""
	}
	return task.Of(tf)
}

// ageTree sets the modification times of everything under path to d ago.
func ageTree(t *testing.T, path string, d time.Duration) {
	t.Helper()
	at := time.Now().Add(-d)
	err := filepath.Walk(path, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, at, at)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestClean: a root with many finished tasks, half of them aged past the
// policy, is cleaned to the policy; nothing of a running task, of a recent
// task or any task file is touched; a dry run removes nothing.
func TestClean(t *testing.T) {
	t.Parallel()
	n := 1000
	if testing.Short() {
		n = 100
	}
	root := t.TempDir()
	startTestDaemon(t, root, &config.FileConfig{Concurrency: 8})
	for i := range n {
		if _, errOut, code := runCLI(t, "submit", "--root", root, "--list", "l", "--agent", "exec", "--subject", fmt.Sprint("t", i), "true"); code != 0 {
			t.Fatalf("submit: %s", errOut)
		}
	}
	gate := filepath.Join(t.TempDir(), "gate")
	runCLI(t, "submit", "--root", root, "--list", "l", "--agent", "exec", "--subject", "running",
		"while [ ! -e "+gate+" ]; do sleep 0.05; done")
	running := fmt.Sprint(n + 1)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("l/%d", i+1)
	}
	if out, errOut, code := runCLI(t, append([]string{"wait", "--root", root, "--timeout", "5m"}, ids...)...); code != 0 {
		t.Fatalf("wait: exit %d\n%s%s", code, out, errOut)
	}
	waitUntil(t, "the gated task to run", 30*time.Second, func() bool { return stateIn(t, root, "l", running) == task.Running })

	runs := filepath.Join(root, "l", ".taskd", "runs")
	for i := 1; i <= n; i += 2 {
		ageTree(t, filepath.Join(runs, fmt.Sprint(i)), 40*24*time.Hour) // odd ids: 40 days old
	}
	ageTree(t, filepath.Join(runs, running), 40*24*time.Hour) // old-looking, but running

	out, _, code := runCLI(t, "clean", "--root", root, "--dry-run")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("l: would remove %d paths", n/2)) {
		t.Fatalf("clean --dry-run: exit %d\n%s", code, lastLines(out, 3))
	}
	if _, err := os.Stat(filepath.Join(runs, "1", "1")); err != nil {
		t.Fatalf("a dry run removed %s: %v", filepath.Join(runs, "1", "1"), err)
	}

	out, errOut, code := runCLI(t, "clean", "--root", root)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("l: removed %d paths", n/2)) {
		t.Fatalf("clean: exit %d\n%s%s", code, out, errOut)
	}
	for i := 1; i <= n; i++ {
		_, err := os.Stat(filepath.Join(runs, fmt.Sprint(i), "1"))
		if old := i%2 == 1; old != os.IsNotExist(err) {
			t.Fatalf("task %d (aged: %v): run folder: %v", i, old, err)
		}
		if _, err := os.Stat(filepath.Join(root, "l", fmt.Sprint(i)+".json")); err != nil {
			t.Fatalf("task file %d: %v", i, err)
		}
	}
	if _, err := os.Stat(filepath.Join(runs, running, "1", "cmd.json")); err != nil {
		t.Errorf("the running task's run folder: %v", err)
	}
	// A second pass finds nothing; the running task still finishes.
	if out, _, _ := runCLI(t, "clean", "--root", root); !strings.Contains(out, "l: removed 0 paths") {
		t.Errorf("a second clean: %s", out)
	}
	os.WriteFile(gate, nil, 0o600)
	if out, errOut, code := runCLI(t, "wait", "--root", root, "--timeout", "30s", "l/"+running); code != 0 {
		t.Errorf("wait for the gated task: exit %d\n%s%s", code, out, errOut)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
