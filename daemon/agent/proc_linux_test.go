package agent

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/internal/proc"
	"github.com/taskd/taskd/internal/waitfor"
)

// startAgentGroup starts, as its own process group, a shell that runs a
// child sleeping a minute, with TASKD_RUN_DIR=runDir in its environment.
// It returns the shell's command and the child's pid.
func startAgentGroup(t *testing.T, runDir string) (*exec.Cmd, int) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("sh", "-c", `sleep 60 & echo $! > "$1.tmp" && mv "$1.tmp" "$1"; wait`, "sh", pidFile)
	cmd.Env = append(os.Environ(), "TASKD_RUN_DIR="+runDir)
	grp := proc.Supervise().Group(marker(runDir))
	waited, err := startWait(cmd, grp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-waited
		grp.Kill()
		grp.Close()
	})
	var pid int
	waitCond(t, "the agent's child pid", func() bool {
		data, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil && pid > 0
	})
	return cmd, pid
}

// exited reports whether pid is gone or a zombie.
func exited(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(data, ')')
	return i >= 0 && i+2 < len(data) && data[i+2] == 'Z'
}

func waitCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitfor.Cond(t, what, 10*time.Second, cond)
}

func writeCmdJSON(t *testing.T, runDir, data string) {
	t.Helper()
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, "cmd.json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestKillLeftover_NoPidRecorded: the daemon died after starting an agent
// and before recording its pid. The agent's group is found by the
// environment of its processes and killed, child included.
func TestKillLeftover_NoPidRecorded(t *testing.T) {
	runDir := filepath.Join(t.TempDir(), "runs", "1", "1")
	writeCmdJSON(t, runDir, `{"argv": ["sh"]}`)
	_, child := startAgentGroup(t, runDir)
	if !KillLeftover(runDir) {
		t.Fatal("killLeftover found nothing to kill")
	}
	waitCond(t, "the agent's child to exit", func() bool { return exited(child) })
}

// TestKillLeftover_NotAnotherAttempt: a recorded group whose processes
// belong to another attempt (a recycled pid) is left alone, and so are
// processes of other attempts when no group is recorded.
func TestKillLeftover_NotAnotherAttempt(t *testing.T) {
	base := t.TempDir()
	other := filepath.Join(base, "runs", "1", "2")
	cmd, child := startAgentGroup(t, other)

	recorded := filepath.Join(base, "runs", "1", "1")
	writeCmdJSON(t, recorded, `{"argv": ["sh"], "pid": `+strconv.Itoa(cmd.Process.Pid)+`}`)
	unrecorded := filepath.Join(base, "runs", "2", "1")
	writeCmdJSON(t, unrecorded, `{"argv": ["sh"]}`)
	for _, runDir := range []string{recorded, unrecorded} {
		if KillLeftover(runDir) {
			t.Errorf("killLeftover(%s) killed a group", runDir)
		}
	}
	if exited(child) {
		t.Fatal("another attempt's process was killed")
	}
	// The same group, asked for by its own run folder, is killed.
	writeCmdJSON(t, other, `{"argv": ["sh"], "pid": `+strconv.Itoa(cmd.Process.Pid)+`}`)
	if !KillLeftover(other) {
		t.Fatal("killLeftover did not kill the recorded group of its attempt")
	}
	waitCond(t, "the agent's child to exit", func() bool { return exited(child) })
}
