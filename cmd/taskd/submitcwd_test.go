package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestSubmit_RunsWhereSubmitted: with a daemon (the real run function)
// serving a root, `taskd submit` from a project directory records that
// directory and the agent runs there; --cwd is resolved against the
// directory submit runs in; a hand-written task without cwd runs in its
// list's configured cwd. cmd.json and taskd status --json show where.
func TestSubmit_RunsWhereSubmitted(t *testing.T) {
	isolate(t)
	t.Setenv("HOME", t.TempDir())
	root := filepath.Join(t.TempDir(), "tasks")
	project := t.TempDir()
	listCwd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeTask(t, cfg, `{"scheduling": "normal", "lists": {"hand": {"cwd": "`+listCwd+`"}}}`)
	ctx, stop := context.WithCancel(context.Background())
	var daemonLog bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"run", "--root", root, "--config", cfg}, &bytes.Buffer{}, &daemonLog)
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("taskd run: %v\n%s", err, daemonLog.String())
		}
	}()
	waitUntil(t, "the daemon to take the root", time.Minute, func() bool { held, _, _ := daemon.LockHolder(root); return held })

	t.Chdir(project)
	var files []string
	for _, args := range [][]string{
		{"submit", "--root", root, "--list", "l", "--agent", "exec", "pwd"},
		{"submit", "--root", root, "--list", "l", "--agent", "exec", "--cwd", "sub", "pwd"},
	} {
		out, errOut, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("taskd %v: exit %d: %s", args, code, errOut)
		}
		files = append(files, strings.TrimSpace(out))
	}
	if err := os.MkdirAll(filepath.Join(root, "hand"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeTask(t, filepath.Join(root, "hand", "1.json"), `{"subject": "where am I", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "pwd"}}}`)
	files = append(files, filepath.Join(root, "hand", "1.json"))

	for i, want := range []string{project, filepath.Join(project, "sub"), listCwd} {
		var tf *taskfile.Task
		waitUntil(t, "task "+files[i]+" to succeed", time.Minute, func() bool {
			tf, _ = taskfile.ReadFile(files[i])
			return tf != nil && task.Of(tf) == task.Succeeded
		})
		runDir := filepath.Join(filepath.Dir(files[i]), ".taskd", "runs", tf.ID, "1")
		if got, _ := os.ReadFile(filepath.Join(runDir, "stdout.log")); strings.TrimSpace(string(got)) != want {
			t.Errorf("task %s ran in %q, want %q", files[i], got, want)
		}
		var cmd struct{ Cwd string }
		data, _ := os.ReadFile(filepath.Join(runDir, "cmd.json"))
		if json.Unmarshal(data, &cmd); cmd.Cwd != want {
			t.Errorf("task %s: cmd.json cwd %q, want %q", files[i], cmd.Cwd, want)
		}
		if i < 2 {
			if cwd, _ := tf.Metadata.Object("taskd").String("cwd"); cwd != want {
				t.Errorf("task %s records cwd %q, want %q", files[i], cwd, want)
			}
		}
	}
	out, _, code := runCLI(t, "status", "--root", root, "--json", "--list", "l")
	var lists []status.List
	if err := json.Unmarshal([]byte(out), &lists); code != 0 || err != nil || len(lists) != 1 || len(lists[0].Tasks) != 2 {
		t.Fatalf("status --json (exit %d, %v):\n%s", code, err, out)
	}
	if got := lists[0].Tasks[0].Cwd; got != project {
		t.Errorf("status --json cwd %q, want %q", got, project)
	}
}
