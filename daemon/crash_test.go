package daemon_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/taskfile"
)

// TestMain lets the test binary run as a daemon process, for tests that
// kill the daemon: TASKD_TEST_DAEMON=<root> runs one until SIGTERM.
func TestMain(m *testing.M) {
	if root := os.Getenv("TASKD_TEST_DAEMON"); root != "" {
		os.Exit(daemonMain(root))
	}
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

func daemonMain(root string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	conc, _ := strconv.Atoi(os.Getenv("TASKD_TEST_CONCURRENCY"))
	cfg, err := daemon.NewConfig(root, nil, &daemon.FileConfig{Concurrency: conc, Grace: "2s"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := daemon.New(cfg, slog.New(slog.NewTextHandler(os.Stderr, nil))).Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// daemonProc is a daemon running as a child process.
type daemonProc struct {
	cmd *exec.Cmd
	log *syncBuffer
}

func startDaemonProc(t *testing.T, root string, concurrency int) *daemonProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TASKD_TEST_DAEMON="+root, "TASKD_TEST_CONCURRENCY="+strconv.Itoa(concurrency))
	p := &daemonProc{cmd: cmd, log: &syncBuffer{}}
	cmd.Stderr = p.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return p
}

func (p *daemonProc) kill(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
}

func (p *daemonProc) term(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("daemon exited with %v\n%s", err, p.log)
	}
}

// newRoot makes a private root with the given lists.
func newRoot(t *testing.T, lists ...string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "tasks")
	os.Mkdir(root, 0o700)
	for _, l := range lists {
		os.Mkdir(filepath.Join(root, l), 0o700)
	}
	return root
}

// TestDaemon_SurvivesSIGKILL kills the daemon while 20 tasks run. A new
// daemon kills the orphaned agents, records the interrupted attempts and
// runs the tasks again; every task completes and no file is torn or lost.
func TestDaemon_SurvivesSIGKILL(t *testing.T) {
	const n = 20
	root := newRoot(t, "l")
	h := &harness{t: t, root: root, logs: &syncBuffer{}}
	marks := t.TempDir()
	p := startDaemonProc(t, root, n)
	for i := 1; i <= n; i++ {
		id := strconv.Itoa(i)
		// Each attempt leaves a mark file, then runs long enough to be killed.
		h.drop("l", id, execTask("task "+id, fmt.Sprintf(`echo $TASKD_ATTEMPT >> %s/%s; sleep 1.5`, marks, id)))
	}
	h.waitFor("20 agents running", 20*time.Second, func() bool {
		for i := 1; i <= n; i++ {
			if _, err := os.Stat(filepath.Join(marks, strconv.Itoa(i))); err != nil {
				return false
			}
		}
		return true
	})
	p.kill(t)
	// Every file parses right after the kill.
	for i := 1; i <= n; i++ {
		if _, err := taskfile.ReadFile(filepath.Join(root, "l", strconv.Itoa(i)+".json")); err != nil {
			t.Fatalf("after SIGKILL: %v", err)
		}
	}
	p2 := startDaemonProc(t, root, n)
	for i := 1; i <= n; i++ {
		h.waitState("l", strconv.Itoa(i), daemon.StateSucceeded, 30*time.Second)
	}
	p2.term(t)
	evs := h.events("l")
	for i := 1; i <= n; i++ {
		id := strconv.Itoa(i)
		task := h.read("l", id)
		attempt, _ := task.Metadata.Object("taskd").Int("attempt")
		interrupted := countEvents(evs, daemon.EvTaskInterrupted, id)
		if attempt != 2 || interrupted != 1 {
			t.Errorf("task %s: attempt %d with %d TaskInterrupted events, want 2 and 1", id, attempt, interrupted)
		}
		mark, _ := os.ReadFile(filepath.Join(marks, id))
		if string(mark) != "1\n2\n" {
			t.Errorf("task %s ran attempts %q, want 1 and 2", id, mark)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(root, "l"))
	for _, e := range entries {
		if e.Name()[0] == '.' && e.Name() != ".taskd" && e.Name() != ".lock" {
			t.Errorf("leftover %s", e.Name())
		}
	}
}

// TestDaemon_RecoversFinishedAttempt: the daemon died after the agent exited
// and its result was persisted, but before the task file recorded it. The
// next daemon records the result instead of running the task again.
func TestDaemon_RecoversFinishedAttempt(t *testing.T) {
	root := newRoot(t, "l")
	runDir := filepath.Join(root, "l", ".taskd", "runs", "1", "1")
	os.MkdirAll(runDir, 0o755)
	os.WriteFile(filepath.Join(runDir, "result.json"), []byte(`{"success": true, "summary": "done before the crash", "exitCode": 0, "durationMs": 5}`), 0o644)
	marker := filepath.Join(t.TempDir(), "ran")
	os.WriteFile(filepath.Join(root, "l", "1.json"), []byte(`{"id": "1", "subject": "s", "description": "", "activeForm": "s", "status": "in_progress", "owner": "taskd", "blocks": [], "blockedBy": [],
	  "metadata": {"taskd": {"agent": "exec", "prompt": "touch `+marker+`", "state": "running", "attempt": 1}}}`), 0o644)
	cfg, _ := daemon.NewConfig(root, nil, nil)
	h := &harness{t: t, root: root, cfg: cfg, logs: &syncBuffer{}}
	h.start()
	defer h.stop()
	task := h.waitState("l", "1", daemon.StateSucceeded, 10*time.Second)
	if s, _ := task.Metadata.Object("taskd").Object("result").String("summary"); s != "done before the crash" {
		t.Errorf("summary = %q", s)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the finished attempt was run again")
	}
}

// TestDaemon_GracefulStopInterrupts: SIGTERM stops running agents, records
// the attempt as interrupted, and the next daemon runs the task again.
func TestDaemon_GracefulStopInterrupts(t *testing.T) {
	root := newRoot(t, "l")
	h := &harness{t: t, root: root, logs: &syncBuffer{}}
	pidFile := filepath.Join(t.TempDir(), "pid")
	p := startDaemonProc(t, root, 2)
	h.drop("l", "1", execTask("long", `if [ "$TASKD_ATTEMPT" = 1 ]; then sleep 60 & echo $! > `+pidFile+`; wait; fi`))
	h.waitFor("the agent to start", 10*time.Second, func() bool { _, err := os.Stat(pidFile); return err == nil })
	p.term(t)
	assertGone(t, pidFile)
	task := h.read("l", "1")
	if stateOf(task) != daemon.StateNone || task.Status != taskfile.StatusPending {
		t.Errorf("after SIGTERM: state %q status %q, want none and pending", stateOf(task), task.Status)
	}
	h.waitEvents("l", daemon.EvTaskInterrupted, "1", 1)
	p2 := startDaemonProc(t, root, 2)
	h.waitState("l", "1", daemon.StateSucceeded, 10*time.Second)
	p2.term(t)
}
