package proc

import (
	"errors"
	"fmt"
	"github.com/taskd/taskd/internal/waitfor"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// reaping makes the test process the subreaper of its descendants, as
// taskd run is. Every child of this test binary is started by Start.
func reaping(t *testing.T) {
	t.Helper()
	if err := Reap(slog.New(slog.DiscardHandler)); err != nil {
		t.Skipf("skipping: not a child subreaper here: %v", err)
	}
}

// waitCond waits for cond, at most a deadline.
func waitCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitfor.Cond(t, what, 20*time.Second, cond)
}

// gone reports whether process pid no longer exists, not even as a
// zombie.
func gone(pid int) bool {
	_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
	return err != nil
}

// TestRun_ExitStatusUnderReaper: many processes at once, each leaving
// orphans that come back to this process, the reaper: every process
// started by Run gets its own exit status (none is taken by the reaper:
// "no child processes"), and every orphan is collected.
func TestRun_ExitStatusUnderReaper(t *testing.T) {
	reaping(t)
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for i := range 400 {
		wg.Go(func() {
			code := i % 7
			cmd := exec.Command("sh", "-c", fmt.Sprintf(`(sleep 0.01 & echo $! >> %s/orphans) ; exit %d`, dir, code))
			err := Run(cmd)
			var ee *exec.ExitError
			switch {
			case code == 0 && err != nil, code != 0 && !errors.As(err, &ee):
				errs <- fmt.Errorf("process %d (exit %d): %v", i, code, err)
			case code != 0 && ee.ExitCode() != code:
				errs <- fmt.Errorf("process %d: exit status %d, want %d", i, ee.ExitCode(), code)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "orphans"))
	pids := strings.Fields(string(data))
	if len(pids) != 400 {
		t.Fatalf("%d orphans recorded, want 400", len(pids))
	}
	for _, p := range pids {
		pid, _ := strconv.Atoi(p)
		waitCond(t, "orphan "+p+" to be collected", func() bool { return gone(pid) })
	}
}

// TestReap_PastAnExitNotWaitedFor: a registered process that has exited
// and is not waited for yet may come first in the kernel's list of exited
// children; a pass of the reaper still collects the exited children behind
// it that are no one's, and leaves the registered one to its Wait, which
// gets its exit status.
func TestReap_PastAnExitNotWaitedFor(t *testing.T) {
	reaping(t)
	// Held, the lock keeps the reaper out until the pass below: both
	// children are made here, one registered and one not.
	registry.mu.Lock()
	locked := true
	defer func() {
		if locked {
			registry.mu.Unlock()
		}
	}()
	first, other := exec.Command("sh", "-c", "exit 5"), exec.Command("true")
	for _, cmd := range []*exec.Cmd{first, other} {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	registry.pids.Store(first.Process.Pid, struct{}{})
	for _, cmd := range []*exec.Cmd{first, other} {
		waitCond(t, "the children to exit", func() bool {
			_, zombie := parentOf(cmd.Process.Pid)
			return zombie
		})
	}
	if n := reapUnregistered(); n != 1 {
		t.Errorf("the pass collected %d children, want 1", n)
	}
	if !gone(other.Process.Pid) {
		t.Error("the child no one waits for was not collected")
	}
	if _, zombie := parentOf(first.Process.Pid); !zombie {
		t.Fatal("the registered process was collected by the reaper")
	}
	registry.mu.Unlock()
	locked = false
	var ee *exec.ExitError
	if err := Wait(first); !errors.As(err, &ee) || ee.ExitCode() != 5 {
		t.Errorf("Wait: %v, want exit status 5", err)
	}
}
