package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
)

// TestRunCPUProfile: taskd run --cpuprofile FILE writes a CPU profile of
// the daemon to FILE, complete when the daemon has stopped; a FILE that
// cannot be created fails the start with the reason.
func TestRunCPUProfile(t *testing.T) {
	root, cfg := queueRoot(t, `{"profiles": {"exec": {"command": ["sh", "-c", "{prompt}"]}}}`)
	prof := filepath.Join(t.TempDir(), "cpu.pprof")
	ctx, cancel := context.WithCancel(context.Background())
	log := &lockedBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"run", "--root", root, "--config", cfg, "--cpuprofile", prof}, &bytes.Buffer{}, log)
	}()
	waitUntil(t, "the daemon to take the root", time.Minute, func() bool { held, _, _ := daemon.LockHolder(root); return held })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("taskd run: %v\n%s", err, log.String())
	}
	data, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	// A profile is gzip-compressed protocol buffers.
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		t.Fatalf("the profile is not one (%d bytes: %q)", len(data), data[:min(len(data), 16)])
	}

	var errOut bytes.Buffer
	bad := filepath.Join(t.TempDir(), "missing", "cpu.pprof")
	err = run(context.Background(), []string{"run", "--root", root, "--config", cfg, "--cpuprofile", bad}, &bytes.Buffer{}, &errOut)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("cpu profile")) {
		t.Fatalf("taskd run --cpuprofile %s: err %v, want one naming the cpu profile", bad, err)
	}
}

// TestWorkerCPUProfile: taskd worker --cpuprofile FILE that cannot be
// created fails the start with the reason, before the worker does
// anything else (the profile of a running worker is measured by
// bench/remote's -cpuprofiles).
func TestWorkerCPUProfile(t *testing.T) {
	isolate(t)
	bad := filepath.Join(t.TempDir(), "missing", "cpu.pprof")
	var errOut bytes.Buffer
	err := run(context.Background(), []string{"worker", "--nats", "nats://127.0.0.1:1", "--state", t.TempDir(), "--cpuprofile", bad}, &bytes.Buffer{}, &errOut)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("cpu profile")) {
		t.Fatalf("taskd worker --cpuprofile %s: err %v, want one naming the cpu profile", bad, err)
	}
}
