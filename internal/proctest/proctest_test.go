package proctest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/internal/waitfor"
)

// TestRunningAndDoomed: a sleeping child runs and is not doomed; a
// stopped one sent SIGTERM (which waits until it is continued) is doomed;
// a killed one no longer runs (a zombie until reaped, then gone).
func TestRunningAndDoomed(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	if !Running(pid) || Doomed(pid) {
		t.Fatalf("a sleeping child: Running %v, Doomed %v; want true, false", Running(pid), Doomed(pid))
	}

	cmd.Process.Signal(syscall.SIGSTOP)
	waitfor.Cond(t, "the child to stop", 10*time.Second, func() bool { return state(pid) == 'T' })
	cmd.Process.Signal(syscall.SIGTERM)
	if !Running(pid) || !Doomed(pid) {
		t.Errorf("a stopped child sent SIGTERM: Running %v, Doomed %v; want true, true", Running(pid), Doomed(pid))
	}

	cmd.Process.Kill()
	waitfor.Cond(t, "the killed child to stop running", 10*time.Second, func() bool { return !Running(pid) })
	cmd.Wait()
	if Running(pid) || Doomed(pid) {
		t.Errorf("a reaped child: Running %v, Doomed %v; want false, false", Running(pid), Doomed(pid))
	}
}

// state is the state letter of process pid, 0 if it is gone.
func state(pid int) byte {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	if i := bytes.LastIndexByte(data, ')'); i >= 0 && i+2 < len(data) {
		return data[i+2]
	}
	return 0
}
