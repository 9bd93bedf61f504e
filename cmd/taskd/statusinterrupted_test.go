package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/task"
)

// TestStatus_InterruptedByTheDaemonsStop: a daemon stopped (taskd run
// ended by its signal) while a task's agent ran leaves the task pending;
// taskd status, read with no daemon running, says its attempt was
// interrupted and that it runs again, where it said only "pending", and
// the next daemon runs it.
func TestStatus_InterruptedByTheDaemonsStop(t *testing.T) {
	isolate(t)
	root := filepath.Join(t.TempDir(), "tasks")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(t.TempDir(), "gate")
	start := func() (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		var log bytes.Buffer
		done := make(chan error, 1)
		go func() { done <- run(ctx, []string{"run", "--root", root}, &bytes.Buffer{}, &log) }()
		waitUntil(t, "the daemon to take the root", time.Minute, func() bool { held, _, _ := daemon.LockHolder(root); return held })
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("taskd run: %v\n%s", err, log.String())
			}
		}
	}
	stop := start()
	began := filepath.Join(t.TempDir(), "began")
	mustCLI(t, "submit", "--root", root, "--list", "l", "--agent", "exec", "touch "+began+"; while [ ! -e "+gate+" ]; do sleep 0.05; done; echo done")
	waitUntil(t, "l/1's agent to run", time.Minute, func() bool {
		_, err := os.Stat(began)
		return err == nil && stateIn(t, root, "l", "1") == task.Running
	})
	stop()

	out, _, _ := runCLI(t, "status", "--root", root, "l/1")
	if got := strings.Join(strings.Fields(out), " "); !strings.Contains(got, "interrupted: attempt 1 was stopped with the daemon; it runs again when a daemon serves the list") {
		t.Errorf("taskd status does not say the attempt was interrupted:\n%s", out)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer start()()
	if out, errOut, code := runCLI(t, "wait", "--root", root, "--timeout", "1m", "l/1"); code != 0 {
		t.Fatalf("wait after the restart: exit %d: %s %s", code, out, errOut)
	}
}
