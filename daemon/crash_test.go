package daemon_test

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/disktest"
	"github.com/taskd/taskd/internal/proc"
	"github.com/taskd/taskd/taskfile"
)

// TestMain lets the test binary run as a daemon process, for tests that
// kill the daemon: TASKD_TEST_DAEMON=<root> runs one until SIGTERM.
func TestMain(m *testing.M) {
	if root := os.Getenv("TASKD_TEST_DAEMON"); root != "" {
		os.Exit(daemonMain(root))
	}
	// The daemon's tests mostly wait for agents, file systems and
	// deadlines: unless -parallel says otherwise, four run per CPU.
	flag.Parse()
	if !flagSet("test.parallel") {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
	// A secret in the daemon's environment, which no file the daemon
	// writes may show (the attack corpus looks for it).
	os.Setenv("TASKD_ATTACK_SECRET", attackSecret)
	code := disktest.RunWithRuntimeDir(m)
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

func daemonMain(root string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	conc, _ := strconv.Atoi(os.Getenv("TASKD_TEST_CONCURRENCY"))
	fc := &config.FileConfig{Grace: "2s"}
	if path := os.Getenv("TASKD_TEST_CONFIG"); path != "" { // profiles, for the real claude
		var err error
		if fc, err = config.LoadFileConfig(path, false); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fc.Concurrency = conc
	cfg, err := config.NewConfig(root, nil, fc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if exe := os.Getenv("TASKD_TEST_EXE"); exe != "" {
		cfg.Executable = exe // the taskd binary agents run their commands with
	}
	opts := &slog.HandlerOptions{}
	if os.Getenv("TASKD_TEST_DEBUG") != "" { // the daemon's decisions, for a test that waits on them
		opts.Level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, opts))
	if err := proc.Reap(log); err != nil { // as taskd run does
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := daemon.New(cfg, log).Run(ctx); err != nil {
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

// startDaemonProc starts a daemon process on root; env adds variables.
func startDaemonProc(t *testing.T, root string, concurrency int, env ...string) *daemonProc {
	t.Helper()
	return startDaemonProcLog(t, root, concurrency, &syncBuffer{}, env...)
}

// startDaemonProcLog is startDaemonProc writing the daemon's log into log.
func startDaemonProcLog(t *testing.T, root string, concurrency int, log *syncBuffer, env ...string) *daemonProc {
	t.Helper()
	return startDaemonProcUnder(t, root, concurrency, log, nil, env...)
}

// startDaemonProcUnder is startDaemonProcLog with the daemon started by
// the command wrap (strace, say), given the daemon's command line last.
func startDaemonProcUnder(t *testing.T, root string, concurrency int, log *syncBuffer, wrap []string, env ...string) *daemonProc {
	t.Helper()
	argv := append(append([]string(nil), wrap...), os.Args[0], "-test.run=^$")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "TASKD_TEST_DAEMON="+root, "TASKD_TEST_CONCURRENCY="+strconv.Itoa(concurrency),
		"XDG_CONFIG_HOME="+filepath.Join(filepath.Dir(root), "config"), // no user's workflows or commands
		"XDG_STATE_HOME="+filepath.Join(filepath.Dir(root), "state"))   // the tasks' worktrees beside the root
	cmd.Env = append(cmd.Env, env...)
	if bin := builtTaskd(); bin != "" {
		cmd.Env = append(cmd.Env, "TASKD_TEST_EXE="+bin)
	}
	p := &daemonProc{cmd: cmd, log: log}
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
	t.Parallel()
	const n = 20
	root := newRoot(t, "l")
	h := &harness{t: t, root: root, logs: &syncBuffer{}}
	marks := t.TempDir()
	p := startDaemonProc(t, root, n)
	for i := 1; i <= n; i++ {
		id := strconv.Itoa(i)
		// Each attempt leaves a mark file; the first then runs until it is
		// killed (the new daemon kills what the dead one left), however
		// long the others take to start.
		h.drop("l", id, execTask("task "+id, fmt.Sprintf(`echo $TASKD_ATTEMPT >> %s/%s; if [ "$TASKD_ATTEMPT" = 1 ]; then while :; do sleep 0.1; done; fi`, marks, id)))
	}
	h.waitFor("20 agents running", 20*time.Second, func() bool {
		for i := 1; i <= n; i++ {
			if readString(marks, strconv.Itoa(i)) != "1\n" {
				return false
			}
		}
		return true
	})
	// Killed once every file says running: no write of the daemon is under
	// way.
	for i := 1; i <= n; i++ {
		h.waitState("l", strconv.Itoa(i), task.Running, time.Minute)
	}
	p.kill(t)
	// Every file parses right after the kill.
	for i := 1; i <= n; i++ {
		if _, err := taskfile.ReadFile(filepath.Join(root, "l", strconv.Itoa(i)+".json")); err != nil {
			t.Fatalf("after SIGKILL: %v", err)
		}
	}
	p2 := startDaemonProc(t, root, n)
	for i := 1; i <= n; i++ {
		h.waitState("l", strconv.Itoa(i), task.Succeeded, 30*time.Second)
	}
	p2.term(t)
	evs := h.events("l")
	for i := 1; i <= n; i++ {
		id := strconv.Itoa(i)
		tf := h.read("l", id)
		attempt, _ := tf.Metadata.Object("taskd").Int("attempt")
		interrupted := countEvents(evs, eventlog.TaskInterrupted, id)
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
	t.Parallel()
	root := newRoot(t, "l")
	runDir := filepath.Join(root, "l", ".taskd", "runs", "1", "1")
	os.MkdirAll(runDir, 0o755)
	os.WriteFile(filepath.Join(runDir, "result.json"), []byte(`{"success": true, "summary": "done before the crash", "exitCode": 0, "durationMs": 5}`), 0o644)
	marker := filepath.Join(t.TempDir(), "ran")
	os.WriteFile(filepath.Join(root, "l", "1.json"), []byte(`{"id": "1", "subject": "s", "description": "", "activeForm": "s", "status": "in_progress", "owner": "taskd", "blocks": [], "blockedBy": [],
	  "metadata": {"taskd": {"agent": "exec", "prompt": "touch `+marker+`", "state": "running", "attempt": 1}}}`), 0o644)
	cfg, _ := config.NewConfig(root, nil, nil)
	h := &harness{t: t, root: root, cfg: cfg, logs: &syncBuffer{}}
	h.start()
	defer h.stop()
	tf := h.waitState("l", "1", task.Succeeded, 10*time.Second)
	if s, _ := tf.Metadata.Object("taskd").Object("result").String("summary"); s != "done before the crash" {
		t.Errorf("summary = %q", s)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the finished attempt was run again")
	}
}

// TestDaemon_GracefulStopInterrupts: SIGTERM stops running agents, records
// the attempt as interrupted, and the next daemon runs the task again.
func TestDaemon_GracefulStopInterrupts(t *testing.T) {
	t.Parallel()
	root := newRoot(t, "l")
	h := &harness{t: t, root: root, logs: &syncBuffer{}}
	pidFile := filepath.Join(t.TempDir(), "pid")
	p := startDaemonProc(t, root, 2)
	h.drop("l", "1", execTask("long", `if [ "$TASKD_ATTEMPT" = 1 ]; then sleep 60 & echo $! > `+pidFile+`; wait; fi`))
	h.waitFor("the agent to record its child", 10*time.Second, func() bool {
		data, _ := os.ReadFile(pidFile)
		return len(strings.TrimSpace(string(data))) > 0
	})
	p.term(t)
	assertGone(h, pidFile)
	tf := h.read("l", "1")
	if stateOf(tf) != task.None || tf.Status != taskfile.StatusPending {
		t.Errorf("after SIGTERM: state %q status %q, want none and pending", stateOf(tf), tf.Status)
	}
	h.waitEvents("l", eventlog.TaskInterrupted, "1", 1)
	p2 := startDaemonProc(t, root, 2)
	h.waitState("l", "1", task.Succeeded, 10*time.Second)
	p2.term(t)
}

// TestChain_SurvivesSIGKILL kills the daemon in the middle of a loop and
// in the middle of a return chain. After a restart both go on where they
// were: every iteration and every return is recorded as done exactly once,
// and the only runs repeated are attempts the kill interrupted (each
// explained by a TaskInterrupted event).
func TestChain_SurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	root := newRoot(t, "l")
	h := &harness{t: t, root: root, logs: &syncBuffer{}}
	cwd := t.TempDir()
	h.drop("l", "1", s2Task(`echo "i$TASKD_ATTEMPT" >> loop; sleep 0.4`, cwd, map[string]any{"loop": map[string]any{"max": 4}}))
	h.drop("l", "2", s2Task(`echo O >> chain`, cwd, map[string]any{"return": []string{
		"echo R1 >> chain; sleep 0.4", "echo R2 >> chain; sleep 0.4", "echo R3 >> chain; sleep 0.4"}}))
	p := startDaemonProc(t, root, 4)
	h.waitFor("the loop and the chain to be under way", 30*time.Second, func() bool {
		return strings.Count(readString(cwd, "loop"), "\n") >= 2 && strings.Contains(readString(cwd, "chain"), "R1")
	})
	p.kill(t)
	p2 := startDaemonProc(t, root, 4)
	h.waitState("l", "1", task.Succeeded, 60*time.Second)
	r3 := findNamed(t, h, "l", "2-r3")
	h.waitState("l", r3, task.Succeeded, 60*time.Second)
	p2.term(t)
	evs := h.events("l")

	// The loop: iterations 1..4 recorded once each; every extra run was an
	// interrupted attempt.
	iterations := map[float64]int{}
	for _, e := range evs {
		if e.Task == "1" && e.Type == "LoopIteration" {
			iterations[e.Data["iteration"].(float64)]++
		}
	}
	for i := 1.0; i <= 4; i++ {
		if iterations[i] != 1 {
			t.Errorf("iteration %v recorded %d times", i, iterations[i])
		}
	}
	// A kill between an attempt's claim and its agent's start interrupts
	// an attempt that never ran: runs may be fewer than interruptions
	// suggest, never more.
	runs := len(strings.Fields(readString(cwd, "loop")))
	if interrupted := countEvents(evs, eventlog.TaskInterrupted, "1"); runs < 4 || runs-interrupted > 4 {
		t.Errorf("the loop ran %d times with %d interrupted attempts; want 4 uninterrupted", runs, interrupted)
	}
	if n, _ := h.read("l", "1").Metadata.Object("taskd").Int("loopIteration"); n != 4 {
		t.Errorf("loopIteration = %d", n)
	}

	// The chain: each return succeeded once, in order; repeats only after
	// interruptions.
	chain := strings.Fields(readString(cwd, "chain"))
	var order []string
	for _, w := range chain {
		if len(order) == 0 || order[len(order)-1] != w {
			order = append(order, w)
		}
	}
	if got := strings.Join(order, " "); got != "O R1 R2 R3" {
		t.Errorf("chain ran %v, want O R1 R2 R3 in order", chain)
	}
	for _, name := range []string{"2-r1", "2-r2", "2-r3"} {
		id := findNamed(t, h, "l", name)
		// At most once: a kill between the write that records the success
		// and the event's append leaves the file completed and no event.
		if got := countEvents(evs, eventlog.TaskSucceeded, id); got > 1 {
			t.Errorf("return %s succeeded %d times", name, got)
		}
		if st := stateOf(h.read("l", id)); st != task.Succeeded {
			t.Errorf("return %s is %q, want succeeded", name, st)
		}
		// Every start but one was interrupted. A kill between the claim
		// and the TaskStarted line interrupts an attempt whose start was
		// not logged, so there may be fewer starts, never more.
		started := countEvents(evs, eventlog.TaskStarted, id)
		interrupted := countEvents(evs, eventlog.TaskInterrupted, id)
		if started < 1 || started-interrupted > 1 {
			t.Errorf("return %s started %d times with %d interruptions; its events:\n%s", name, started, interrupted, eventsOf(evs, id))
		}
		ran := 0
		for _, w := range chain {
			if w == strings.ToUpper(name[2:]) {
				ran++
			}
		}
		if ran < 1 || ran-interrupted > 1 {
			t.Errorf("return %s ran %d times with %d interruptions", name, ran, interrupted)
		}
	}
}

// eventsOf renders the events of task id, one per line, for a failure's
// message.
func eventsOf(evs []eventlog.Event, id string) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Task == id {
			fmt.Fprintf(&b, "  %s %s attempt %d %v\n", e.TS.Format("15:04:05.000"), e.Type, e.Attempt, e.Data)
		}
	}
	return b.String()
}

func readString(dir, name string) string {
	data, _ := os.ReadFile(filepath.Join(dir, name))
	return string(data)
}

// TestChildren_WaitingParentSurvivesSIGKILL: the daemon is killed while a
// parent waits for its child; after a restart the child runs again (it was
// interrupted) and the parent is resumed exactly once, with its result.
func TestChildren_WaitingParentSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	taskdBinary(t) // agents run taskd push
	root := newRoot(t, "l")
	h := &harness{t: t, root: root, logs: &syncBuffer{}}
	marks := t.TempDir()
	// The child's first run lasts until the daemon's death ends it; its
	// second, after the restart, succeeds.
	h.drop("l", "1", execTask("parent", `if [ -n "$TASKD_RESULTS" ]; then printf '%s' "$TASKD_RESULTS" > `+marks+`/resumed; exit 0; fi
taskd push name=slow "echo started >> `+marks+`/child; if [ \$(grep -c started `+marks+`/child) -eq 1 ]; then exec sleep 900; fi; echo '{\"success\": true, \"summary\": \"slow done\"}'" && taskd run`))
	p := startDaemonProc(t, root, 2)
	h.waitState("l", "1", task.Waiting, 30*time.Second)
	h.waitFor("the child to run", 30*time.Second, func() bool { return readString(marks, "child") != "" })
	p.kill(t)
	p2 := startDaemonProc(t, root, 2)
	h.waitState("l", "1", task.Succeeded, 60*time.Second)
	p2.term(t)
	evs := h.events("l")
	if got := countEvents(evs, eventlog.TaskResumed, "1"); got != 1 {
		t.Errorf("the parent was resumed %d times, want once", got)
	}
	if got := readString(marks, "resumed"); !strings.Contains(got, "slow done") {
		t.Errorf("the parent was resumed with %q", got)
	}
	if runs := strings.Count(readString(marks, "child"), "started"); runs != 2 {
		t.Errorf("the child ran %d times, want 2 (the first one interrupted)", runs)
	}
}

// flagSet reports whether the flag called name was given on the command
// line.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
