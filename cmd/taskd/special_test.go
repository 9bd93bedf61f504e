package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSpecialFiles_NoCommandWaits: a FIFO where taskd expects one of its
// files — the configuration, the root's daemon lock, a list's
// .highwatermark, an attempt's log — makes no taskd command wait: each
// exits at once (a deadline proves it), saying what the file is.
func TestSpecialFiles_NoCommandWaits(t *testing.T) {
	t.Parallel()
	fifo := func(path string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(path), 0o700)
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Skipf("skipping: mkfifo: %v", err)
		}
	}
	newRoot := func() string {
		root := filepath.Join(t.TempDir(), "tasks")
		if err := os.MkdirAll(filepath.Join(root, "l"), 0o700); err != nil {
			t.Fatal(err)
		}
		return root
	}
	tests := []struct {
		name  string
		setup func(root string) []string // the command's arguments
		code  int
		want  string
	}{
		{"configuration", func(root string) []string {
			cfg := filepath.Join(filepath.Dir(root), "config.json")
			fifo(cfg)
			return []string{"run", "--root", root, "--config", cfg}
		}, 1, "config.json: a FIFO (named pipe), not a regular file"},
		{"doctor's configuration", func(root string) []string {
			cfg := filepath.Join(filepath.Dir(root), "config.json")
			fifo(cfg)
			return []string{"doctor", "--root", root, "--config", cfg}
		}, 1, "a FIFO (named pipe), not a regular file"},
		{"root lock", func(root string) []string {
			fifo(filepath.Join(root, ".taskd.lock"))
			return []string{"run", "--root", root}
		}, 1, ".taskd.lock: a FIFO (named pipe), not a regular file"},
		{"highwatermark", func(root string) []string {
			fifo(filepath.Join(root, "l", ".highwatermark"))
			return []string{"submit", "--root", root, "--list", "l", "--agent", "exec", "true"}
		}, 1, ".highwatermark: a FIFO (named pipe), not a regular file"},
		{"attempt log", func(root string) []string {
			writeTask(t, filepath.Join(root, "l", "1.json"), `{"id": "1", "subject": "s", "status": "pending", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "true", "state": "failed", "attempt": 1}}}`)
			fifo(filepath.Join(root, "l", ".taskd", "runs", "1", "1", "stdout.log"))
			return []string{"logs", "--root", root, "l/1"}
		}, 1, "stdout.log: a FIFO (named pipe), not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			root := newRoot()
			args := tt.setup(root)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], args...)
			cmd.Env = append(os.Environ(), "TASKD_TEST_MAIN=1", "XDG_CONFIG_HOME="+dir, "HOME="+dir, "TASKD_ROOT=", "TASKD_LIST=", "TASKD_TASK_FILE=")
			out, _ := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("taskd %s has not exited after 15s:\n%s", strings.Join(args, " "), out)
			}
			if code := cmd.ProcessState.ExitCode(); code != tt.code || !strings.Contains(string(out), tt.want) {
				t.Errorf("taskd %s: exit %d, want %d saying %q:\n%s", strings.Join(args, " "), code, tt.code, tt.want, out)
			}
		})
	}
}
