package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// schedPolicy returns the scheduling policy of thread tid of process pid
// from its stat file (SCHED_OTHER 0, SCHED_BATCH 3).
func schedPolicy(pid, tid string) (int, error) {
	data, err := os.ReadFile(filepath.Join("/proc", pid, "task", tid, "stat"))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces, start with the third; the policy is the 41st.
	_, rest, ok := bytes.Cut(data, []byte(") "))
	fields := strings.Fields(string(rest))
	if !ok || len(fields) < 41-2 {
		return 0, fmt.Errorf("%s/task/%s/stat: %q has too few fields", pid, tid, data)
	}
	return strconv.Atoi(fields[41-3])
}

// TestBatchScheduling runs, in a child process (this test binary again),
// setBatchScheduling, then makes new threads and starts a command; every
// thread, old and new, and the command must be SCHED_BATCH (if this test
// runs under the default policy or batch; under another it must be left
// alone). Without the call (the "normal" configuration) they keep this
// test's policy.
func TestBatchScheduling(t *testing.T) {
	if mode := os.Getenv("TASKD_TEST_SCHED_CHILD"); mode != "" {
		schedChild(t, mode)
		return
	}
	own, err := schedPolicy("self", strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	batch := own
	if own == unix.SCHED_NORMAL {
		batch = unix.SCHED_BATCH
	}
	for _, tt := range []struct {
		mode string
		want string
	}{{"batch", strconv.Itoa(batch)}, {"normal", strconv.Itoa(own)}} {
		t.Run(tt.mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBatchScheduling$", "-test.count=1")
			cmd.Env = append(os.Environ(), "TASKD_TEST_SCHED_CHILD="+tt.mode)
			out, err := cmd.CombinedOutput()
			if bytes.Contains(out, []byte("scheduling policy not permitted")) {
				t.Skipf("this system does not let a process set SCHED_BATCH on itself:\n%s", out)
			}
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			var threads, agentName []string
			for line := range strings.Lines(string(out)) {
				if v, ok := strings.CutPrefix(line, "thread policy "); ok {
					threads = append(threads, strings.TrimSpace(v))
				}
				if v, ok := strings.CutPrefix(line, "agent policy "); ok {
					agentName = append(agentName, strings.TrimSpace(v))
				}
			}
			if len(threads) < 2 || len(agentName) != 1 {
				t.Fatalf("child reported %d threads and %d agents, want several and one:\n%s", len(threads), len(agentName), out)
			}
			for _, p := range append(threads, agentName...) {
				if p != tt.want {
					t.Errorf("a policy is %s, want %s for every thread and the agent:\n%s", p, tt.want, out)
					break
				}
			}
		})
	}
}

func schedChild(t *testing.T, mode string) {
	if mode == "batch" {
		err := setBatchScheduling()
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) {
			fmt.Println("scheduling policy not permitted:", err)
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// New threads: goroutines locked to their threads, all alive at once.
	var started, done sync.WaitGroup
	release := make(chan struct{})
	for range 4 {
		started.Add(1)
		done.Go(func() {
			runtime.LockOSThread()
			started.Done()
			<-release
		})
	}
	started.Wait()
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		p, err := schedPolicy("self", e.Name())
		if err != nil {
			continue // exited meanwhile
		}
		fmt.Printf("thread policy %d\n", p)
	}
	close(release)
	done.Wait()
	out, err := exec.Command("sh", "-c", `cut -d' ' -f41 /proc/self/stat`).Output()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("agent policy %s\n", strings.TrimSpace(string(out)))
}
