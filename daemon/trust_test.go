package daemon_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
	"github.com/taskd/taskd/internal/disktest"
	"github.com/taskd/taskd/internal/waitfor"
	"github.com/taskd/taskd/taskfile"
)

// The tests of trust (docs/proof.md): an agent starts only once its task
// file says so, a write that fails is a state a person can see, a
// person's completed and cancel are obeyed for the whole tree, a failure
// reaches the tasks that depend on it and those above it, and nothing is
// left running or run twice by surprise. Each runs the real daemon, real
// processes and real files.

// statusJSON runs taskd status --json on list of root, as a person would,
// and returns the list's tasks by id.
func statusJSON(t *testing.T, root, list string) map[string]status.Task {
	t.Helper()
	out, err := exec.Command(taskdBinary(t), "status", "--root", root, "--list", list, "--json").Output()
	if err != nil {
		t.Fatalf("taskd status: %v", err)
	}
	var lists []status.List
	if err := json.Unmarshal(out, &lists); err != nil {
		t.Fatalf("taskd status --json: %v\n%s", err, out)
	}
	tasks := map[string]status.Task{}
	for _, l := range lists {
		for _, ts := range l.Tasks {
			tasks[ts.ID] = ts
		}
	}
	return tasks
}

// cpuTime returns the CPU time process pid has used so far.
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		t.Skipf("skipping the CPU check: %v", err)
	}
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// TestTrust_DanglingLock: a dangling symbolic link where the task file's
// lock belongs (<id>.json.lock). No lock can be taken while it is there:
// the task is held, visibly (taskd status says why and what to do), the
// daemon does not spin, no agent starts, no event says the task ran or
// succeeded, and the file stays pending; once the link is removed the
// task runs, once.
func TestTrust_DanglingLock(t *testing.T) {
	t.Parallel()
	root := newRoot(t, "l")
	h := &harness{t: t, root: root, logs: &syncBuffer{}}
	marks := t.TempDir()
	lock := filepath.Join(root, "l", "1.json.lock")
	if err := os.Symlink(filepath.Join(t.TempDir(), "gone"), lock); err != nil {
		t.Fatal(err)
	}
	p := startDaemonProc(t, root, 2)
	h.drop("l", "1", execTask("behind a dangling lock", "echo ran >> "+marks+"/1"))
	// Held, with the reason, where a person looks.
	var st status.Task
	h.waitFor("taskd status to show the task held", 20*time.Second, func() bool {
		st = statusJSON(t, root, "l")["1"]
		return st.Held != ""
	})
	if !strings.Contains(st.Held, lock) || !strings.Contains(st.Held, "symbolic link") || !strings.Contains(st.Held, "remove it") {
		t.Errorf("held reason %q does not name the lock, what it is and what to do", st.Held)
	}
	// No spin: over two more of its tries (its backoff waits 2s, then
	// 4s; status says when the next is due), the daemon uses a sliver of a
	// CPU.
	cpu0, at := cpuTime(t, p.cmd.Process.Pid), time.Now()
	tries, due := 0, st.HeldRetry
	if !waitfor.WithinEvery(time.Minute, 100*time.Millisecond, func() bool {
		if next := statusJSON(t, root, "l")["1"].HeldRetry; !next.Equal(due) {
			tries, due = tries+1, next
		}
		return tries >= 2
	}) {
		t.Fatalf("the daemon tried the held task %d more times in a minute, want 2", tries)
	}
	used, over := cpuTime(t, p.cmd.Process.Pid)-cpu0, time.Since(at)
	t.Logf("over %d tries in %s the daemon used %s of CPU", tries, over.Round(time.Millisecond), used)
	if used > over/10 {
		t.Errorf("the daemon used %s of CPU in %s while the task was held", used, over.Round(time.Millisecond))
	}
	if readString(marks, "1") != "" {
		t.Fatalf("the agent ran although its claim could not be written")
	}
	tf := h.read("l", "1")
	if tf.Status != "" || stateOf(tf) != task.None {
		t.Errorf("the file says %s/%q, want it as it was dropped (no status, no state)", tf.Status, stateOf(tf))
	}
	evs := h.events("l")
	for _, typ := range []string{eventlog.TaskStarted, eventlog.TaskSucceeded, eventlog.TaskFailed} {
		if n := countEvents(evs, typ, "1"); n > 0 {
			t.Errorf("%d %s events for a task that never ran", n, typ)
		}
	}
	if countEvents(evs, eventlog.TaskHeld, "1") != 1 {
		t.Errorf("want one TaskHeld event:\n%s", eventsOf(evs, "1"))
	}
	// Removed: the task runs at once (the lock's removal wakes it), once.
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	h.waitState("l", "1", task.Succeeded, 20*time.Second)
	p.term(t)
	if got := readString(marks, "1"); got != "ran\n" {
		t.Errorf("the agent ran %q, want once", got)
	}
	evs = h.events("l")
	if countEvents(evs, eventlog.TaskStarted, "1") != 1 || countEvents(evs, eventlog.TaskSucceeded, "1") != 1 || countEvents(evs, eventlog.TaskHoldEnded, "1") != 1 {
		t.Errorf("want one start, one success, one end of the hold:\n%s", eventsOf(evs, "1"))
	}
}

// TestTrust_CompletedWithStaleState: a person completed tasks (status
// completed, in Claude Code, say) while no daemon ran, leaving taskd's
// state as it was: running, retrying, waiting, queued. None of them runs
// again; each is recorded completed by its user (completedBy, a
// TaskCompletedByUser event), and a task blocked by one runs. A task
// completed while its agent runs is not run again either, whatever the
// attempt ends with (here: a failure with retries left).
func TestTrust_CompletedWithStaleState(t *testing.T) {
	t.Parallel()
	root := newRoot(t, "l")
	marks := t.TempDir()
	write := func(id, state string, extra string) {
		t.Helper()
		data := fmt.Sprintf(`{"id": %q, "subject": "s %s", "description": "", "activeForm": "s", "status": "completed", "owner": "taskd", "blocks": [], "blockedBy": [],
  "metadata": {"taskd": {"agent": "exec", "prompt": "echo ran >> %s/%s", "state": %q, "attempt": 1%s}}}`, id, id, marks, id, state, extra)
		if err := os.WriteFile(filepath.Join(root, "l", id+".json"), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("1", "running", `, "startedAt": "2026-01-02T03:04:05Z"`)
	write("2", "retrying", `, "retryAt": "2026-01-02T03:04:05Z", "failures": 1, "retries": 3`)
	write("3", "waiting", `, "children": {"parallel": ["9"]}`)
	write("4", "queued", `, "parent": "3"`)
	h := startDaemonProcHarness(t, root, 2)
	h.drop("l", "5", execTask("after 1", "echo ran >> "+marks+"/5", "blockedBy", `["1"]`))
	h.waitState("l", "5", task.Succeeded, 20*time.Second)
	for _, id := range []string{"1", "2", "3", "4"} {
		tf := h.waitState("l", id, task.Succeeded, 10*time.Second)
		if by := tdString(tf, "completedBy"); by != "user" || tf.Status != taskfile.StatusCompleted {
			t.Errorf("task %s: completedBy %q, status %s", id, by, tf.Status)
		}
		h.waitEvents("l", eventlog.TaskCompletedByUser, id, 1)
	}

	// Completed while its agent runs: its failure is recorded, not retried.
	h.drop("l", "6", execTask("completed under its agent", "echo ran >> "+marks+"/6; sleep 1; exit 1", "taskd.retries", "3"))
	h.waitState("l", "6", task.Running, 20*time.Second)
	h.waitFor("the agent of 6 to run", 10*time.Second, func() bool { return readString(marks, "6") != "" })
	if _, err := mustDir(t, filepath.Join(root, "l")).Update(context.Background(), "6", func(t *taskfile.Task) error {
		t.Status = taskfile.StatusCompleted // as Claude Code's TaskUpdate does
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tf := h.waitState("l", "6", task.Succeeded, 20*time.Second)
	if tf.Status != taskfile.StatusCompleted || tdString(tf, "completedBy") != "user" {
		t.Errorf("task 6: status %s, completedBy %q", tf.Status, tdString(tf, "completedBy"))
	}
	h.stopProc()
	for _, id := range []string{"1", "2", "3", "4"} {
		if got := readString(marks, id); got != "" {
			t.Errorf("task %s ran although its user completed it", id)
		}
	}
	if got := readString(marks, "6"); got != "ran\n" {
		t.Errorf("task 6 ran %q, want once", got)
	}
	evs := h.events("l")
	for _, id := range []string{"1", "2", "3", "4"} {
		if n := countEvents(evs, eventlog.TaskStarted, id); n > 0 {
			t.Errorf("task %s started %d times", id, n)
		}
	}
}

// procHarness is a harness whose daemon is a process of its own.
type procHarness struct {
	*harness
	p *daemonProc
}

// startDaemonProcHarness starts a daemon process on root, with taskd's
// binary for its agents. What the harness's waits print when they time
// out is the daemon process's log (every daemon's the harness starts).
func startDaemonProcHarness(t *testing.T, root string, concurrency int) *procHarness {
	taskdBinary(t)
	p := startDaemonProc(t, root, concurrency)
	return &procHarness{harness: &harness{t: t, root: root, logs: p.log}, p: p}
}

// restartProc starts another daemon process on the root, logging into
// the same log (the one before must have ended).
func (h *procHarness) restartProc(concurrency int, env ...string) {
	h.p = startDaemonProcLog(h.t.(*testing.T), h.root, concurrency, h.logs, env...)
}

// stopProc stops the daemon process and waits for it.
func (h *procHarness) stopProc() { h.p.term(h.t.(*testing.T)) }

// TestTrust_FailedBlocker: a parent waits for two children, and the second
// is blocked by the first, which fails for good. The second fails at once
// with the reason (it never runs); the parent is resumed once both have
// ended, each child's outcome in its prompt; the failures are logged on
// the parent. A task that says to wait (onBlockerFailure "wait") waits.
func TestTrust_FailedBlocker(t *testing.T) {
	t.Parallel()
	root := newRoot(t, "l")
	marks := t.TempDir()
	files := map[string]string{
		"1": fmt.Sprintf(`{"id": "1", "subject": "parent", "description": "", "activeForm": "p", "status": "in_progress", "owner": "taskd", "blocks": [], "blockedBy": [],
  "metadata": {"taskd": {"agent": "exec", "prompt": "printf '%%s' \"$TASKD_RESULTS\" > %s/results", "state": "waiting", "attempt": 1, "children": {"parallel": ["2", "3"]}}}}`, marks),
		"2": `{"id": "2", "subject": "fails", "description": "", "activeForm": "a", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": [],
  "metadata": {"taskd": {"agent": "exec", "prompt": "echo broken >&2; exit 3", "parent": "1", "name": "a"}}}`,
		"3": fmt.Sprintf(`{"id": "3", "subject": "after a", "description": "", "activeForm": "b", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": ["2"],
  "metadata": {"taskd": {"agent": "exec", "prompt": "echo ran >> %s/3", "parent": "1", "name": "b"}}}`, marks),
		"4": `{"id": "4", "subject": "fails too", "description": "", "activeForm": "d", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": [],
  "metadata": {"taskd": {"agent": "exec", "prompt": "exit 1"}}}`,
		"5": fmt.Sprintf(`{"id": "5", "subject": "waits for 4 anyway", "description": "", "activeForm": "e", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": ["4"],
  "metadata": {"taskd": {"agent": "exec", "prompt": "echo ran >> %s/5", "onBlockerFailure": "wait"}}}`, marks),
	}
	for id, data := range files {
		if err := os.WriteFile(filepath.Join(root, "l", id+".json"), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h := startDaemonProcHarness(t, root, 2)
	h.waitState("l", "2", task.Failed, 20*time.Second)
	b := h.waitState("l", "3", task.Failed, 20*time.Second)
	if msg := tdString(b, "error"); !strings.Contains(msg, "task 2") || !strings.Contains(msg, "failed") || !strings.Contains(msg, "onBlockerFailure") {
		t.Errorf("3's error %q does not say why and how to wait instead", msg)
	}
	h.waitState("l", "1", task.Succeeded, 20*time.Second)
	h.waitState("l", "4", task.Failed, 20*time.Second)
	h.stopProc()
	if readString(marks, "3") != "" {
		t.Errorf("3 ran although its blocker failed")
	}
	results := readString(marks, "results")
	for _, want := range []string{"a (task 2): failed", "b (task 3): failed", "exit status 3", "not run: task 2"} {
		if !strings.Contains(results, want) {
			t.Errorf("the parent's results lack %q:\n%s", want, results)
		}
	}
	if tf := h.read("l", "5"); stateOf(tf) != task.None || tf.Status != taskfile.StatusPending {
		t.Errorf("5 (onBlockerFailure wait) is %s/%q, want still pending", tf.Status, stateOf(tf))
	}
	evs := h.events("l")
	// Each failure is told to the parent once. (A claim slowed down by
	// a loaded machine for more than two seconds is shown held, and that
	// is told too, with state "held": not counted here.)
	var failed []string
	for _, e := range evs {
		if e.Type == eventlog.ChildNeedsAttention && e.Task == "1" && e.Data["state"] == "failed" {
			failed = append(failed, fmt.Sprint(e.Data["descendant"]))
		}
	}
	if slices.Sort(failed); !slices.Equal(failed, []string{"2", "3"}) {
		t.Errorf("the parent was told of failures of %v, want 2 and 3, once each:\n%s%s%s", failed, eventsOf(evs, "1"), eventsOf(evs, "2"), eventsOf(evs, "3"))
	}
	if n := countEvents(evs, eventlog.TaskStarted, "3"); n != 0 {
		t.Errorf("3 started %d times", n)
	}
}

// alivePid reports whether process pid runs (a zombie does not).
func alivePid(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(data, ')')
	return i >= 0 && i+2 < len(data) && data[i+2] != 'Z' && syscall.Kill(pid, 0) == nil
}

// writeScript writes an agent's script into dir and returns the prompt
// that runs it.
func writeScript(t *testing.T, dir, name, script string) string {
	t.Helper()
	path := filepath.Join(dir, name+".sh")
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return "sh " + path
}

// TestTrust_CancelTree: a tree of three levels — a parent waiting for its
// child, a queued child it never ran, the child's agent running, and a
// grandchild's agent running with a background process it started — is
// cancelled at the top. Every task of it ends cancelled, with an error that
// names the task above that was cancelled and says what the task was
// doing; the background process is gone; and after the daemon is killed
// and started again nothing of the tree runs.
func TestTrust_CancelTree(t *testing.T) {
	t.Parallel()
	root := newRoot(t, "l")
	m := t.TempDir()
	grandchild := writeScript(t, m, "g", `echo ran >> `+m+`/g
(while :; do date +%s%N >> `+m+`/bg; sleep 0.05; done) &
echo $! > `+m+`/bgpid
sleep 60`)
	child := writeScript(t, m, "c", `echo ran >> `+m+`/c
taskd push name=g "`+grandchild+`" && taskd run
sleep 60`)
	parent := writeScript(t, m, "p", `echo ran >> `+m+`/p
if [ -n "$TASKD_RESULTS" ]; then exit 0; fi
taskd push name=c "`+child+`" && taskd push name=q "echo ran >> `+m+`/q" && taskd run 1`)
	h := startDaemonProcHarness(t, root, 4)
	h.drop("l", "1", execTask("the top of the tree", parent))
	h.waitState("l", "1", task.Waiting, 30*time.Second)
	c, q := findNamed(t, h.harness, "l", "c"), findNamed(t, h.harness, "l", "q")
	g := findNamed(t, h.harness, "l", "g")
	h.waitState("l", g, task.Running, 30*time.Second)
	h.waitFor("the grandchild's background process to write", 30*time.Second, func() bool { return strings.Count(readString(m, "bg"), "\n") > 2 })
	bg := readPid(t, filepath.Join(m, "bgpid"))

	if _, err := exec.Command(taskdBinary(t), "cancel", "--root", root, "l/1").CombinedOutput(); err != nil {
		t.Fatalf("taskd cancel: %v", err)
	}
	want := map[string][]string{
		"1": {"cancelled while waiting for 1 child"},
		c:   {"cancelled because task 1 above it was cancelled", "while its agent ran (attempt 1)"},
		g:   {"cancelled because task 1 above it was cancelled", "while its agent ran (attempt 1)"},
		q:   {"cancelled because task 1 above it was cancelled", "while queued, before it ever ran"},
	}
	for id, phrases := range want {
		tf := h.waitState("l", id, task.Cancelled, 30*time.Second)
		for _, p := range phrases {
			if msg := tdString(tf, "error"); !strings.Contains(msg, p) {
				t.Errorf("task %s: error %q lacks %q", id, msg, p)
			}
		}
	}
	h.waitFor("the grandchild's background process to be gone", 10*time.Second, func() bool { return !alivePid(bg) })
	lines := strings.Count(readString(m, "bg"), "\n")

	// Killed and started again: nothing of the tree runs again.
	h.p.kill(t)
	h.restartProc(4, "TASKD_TEST_DEBUG=1")
	// Once the restarted daemon says it is idle, it has made every
	// decision about what it found: whatever it would run again has run.
	h.waitFor("the restarted daemon to handle what it found", 30*time.Second, func() bool {
		return strings.Contains(h.p.log.String(), "taskd idle")
	})
	h.stopProc()
	for name, want := range map[string]string{"p": "ran\n", "c": "ran\n", "g": "ran\n", "q": ""} {
		if got := readString(m, name); got != want {
			t.Errorf("%s ran %q, want %q", name, got, want)
		}
	}
	if got := strings.Count(readString(m, "bg"), "\n"); got != lines {
		t.Errorf("the background process wrote %d lines after it was gone", got-lines)
	}
	for id := range want {
		if s := stateOf(h.read("l", id)); s != task.Cancelled {
			t.Errorf("after the restart task %s is %q", id, s)
		}
	}
}

// ppidOf returns the parent of process pid, or 0.
func ppidOf(pid int) int {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// TestTrust_KilledDaemonLeavesNoOrphan: the daemon is killed with SIGKILL
// while an agent's background grandchild writes to a file. The agent dies
// with the daemon (its parent-death signal); the grandchild, in the
// agent's process group, is killed by the next daemon, started 5 seconds
// later, before it handles the interrupted attempt (checked against the
// start time cmd.json records), and the attempt is handled once: recorded
// interrupted once, run again once.
func TestTrust_KilledDaemonLeavesNoOrphan(t *testing.T) {
	t.Parallel()
	root := newRoot(t, "l")
	m := t.TempDir()
	script := writeScript(t, m, "a", `echo $TASKD_ATTEMPT >> `+m+`/runs
if [ "$TASKD_ATTEMPT" = 1 ]; then
	(while :; do date +%s%N >> `+m+`/bg; sleep 0.05; done) &
	echo $! > `+m+`/bgpid
	sleep 60
fi`)
	h := startDaemonProcHarness(t, root, 2)
	h.drop("l", "1", execTask("leaves a writer behind", script))
	h.waitFor("the background writer", 30*time.Second, func() bool { return strings.Count(readString(m, "bg"), "\n") > 2 })
	bg := readPid(t, filepath.Join(m, "bgpid"))
	var cmd struct {
		PID       int    `json:"pid"`
		StartTime uint64 `json:"startTime"`
	}
	if err := json.Unmarshal([]byte(readString(filepath.Join(root, "l", ".taskd", "runs", "1", "1"), "cmd.json")), &cmd); err != nil || cmd.PID == 0 || cmd.StartTime == 0 {
		t.Fatalf("cmd.json records pid %d, start time %d (%v)", cmd.PID, cmd.StartTime, err)
	}
	h.p.kill(t)
	h.waitFor("the agent to die with the daemon", 10*time.Second, func() bool { return !alivePid(cmd.PID) })
	// Without a daemon the grandchild, an orphan now, goes on writing.
	before := strings.Count(readString(m, "bg"), "\n")
	h.waitFor("the orphan to go on writing without a daemon", 20*time.Second, func() bool {
		return strings.Count(readString(m, "bg"), "\n") >= before+10 || !alivePid(bg)
	})
	if !alivePid(bg) {
		t.Fatalf("the background writer died with the daemon: nothing left to check")
	}
	h.restartProc(2)
	h.waitFor("the orphan to be killed by the next daemon", 10*time.Second, func() bool { return !alivePid(bg) })
	written := strings.Count(readString(m, "bg"), "\n")
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	h.stopProc()
	if got := readString(m, "runs"); got != "1\n2\n" {
		t.Errorf("attempts run: %q, want 1 then 2", got)
	}
	evs := h.events("l")
	if n := countEvents(evs, eventlog.TaskInterrupted, "1"); n != 1 {
		t.Errorf("%d TaskInterrupted events, want 1:\n%s", n, eventsOf(evs, "1"))
	}
	if n := countEvents(evs, eventlog.TaskStarted, "1"); n != 2 {
		t.Errorf("%d TaskStarted events, want 2:\n%s", n, eventsOf(evs, "1"))
	}
	if got := strings.Count(readString(m, "bg"), "\n"); got != written {
		t.Errorf("the writer wrote %d lines after it was killed", got-written)
	}
}

// TestTrust_ReapsWhatAgentsLeave: a process an agent started in a session
// of its own, twice forked (its parent gone), comes back to the daemon,
// the subreaper of its agents (not to init): while it lives its parent is
// the daemon. When the agent exits, it is killed with the rest of the
// attempt's processes, and the daemon waits for it: no zombie is left.
func TestTrust_ReapsWhatAgentsLeave(t *testing.T) {
	t.Parallel()
	needTool(t, "setsid")
	root := newRoot(t, "l")
	m := t.TempDir()
	script := writeScript(t, m, "a", `(setsid sh -c 'echo $$ > `+m+`/esc.tmp; mv `+m+`/esc.tmp `+m+`/esc; exec sleep 300' &)
while [ ! -e `+m+`/release ]; do sleep 0.01; done`)
	h := startDaemonProcHarness(t, root, 2)
	h.drop("l", "1", execTask("leaves a process", script))
	h.waitFor("the orphan to start", 30*time.Second, func() bool { return fileExists(filepath.Join(m, "esc")) })
	esc := readPid(t, filepath.Join(m, "esc"))
	daemonPid := h.p.cmd.Process.Pid
	// Its parent exited: it is the daemon's now.
	h.waitFor("the orphan to come back to the daemon", 10*time.Second, func() bool { return ppidOf(esc) == daemonPid })
	if err := os.WriteFile(filepath.Join(m, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	h.waitFor("the orphan to be killed and reaped", 10*time.Second, func() bool {
		_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(esc)))
		return err != nil
	})
	h.stopProc()
}

// keepOnFailure, when the test fails and TASKD_TEST_KEEP names a
// directory, copies dir (the test's file system: task files, run folders,
// the event log) and the daemon's log into a new directory under it, for
// a failure that happens once in many runs to be read afterwards.
func keepOnFailure(t *testing.T, dir string, log *syncBuffer) {
	keep := os.Getenv("TASKD_TEST_KEEP")
	if keep == "" {
		return
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		to, err := os.MkdirTemp(keep, "kept-*")
		if err != nil {
			t.Logf("keep: %v", err)
			return
		}
		if out, err := exec.Command("cp", "-a", dir, to).CombinedOutput(); err != nil {
			t.Logf("keep: %v: %s", err, out)
		}
		os.WriteFile(filepath.Join(to, "daemon.log"), []byte(log.String()), 0o600)
		t.Logf("kept %s and the daemon's log in %s", dir, to)
	})
}

// fill writes path until its file system has no space left.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !strings.Contains(err.Error(), "no space left") {
				t.Fatalf("fill: %v", err)
			}
			break
		}
	}
	for _, n := range []int{4096, 512, 1} { // the last pages too
		for {
			if _, err := f.Write(chunk[:n]); err != nil {
				break
			}
		}
	}
}

// TestTrust_DiskFull runs tasks on a small file system that fills up while
// agents run: a claim that cannot be written starts no agent, and the task
// is held, visibly, with the reason (taskd status, from a status file on
// another file system); the end of an attempt that ran is held too, its
// result kept outside the full run folder; nothing spins meanwhile. The
// daemon is stopped (SIGTERM) while those ends are held, started again and
// killed (SIGKILL) while they are held again, with the disk still full:
// the results survive both. When space comes back every task ends
// succeeded, each run exactly once, each end recorded once.
func TestTrust_DiskFull(t *testing.T) {
	t.Parallel()
	disk := disktest.Small(t, 4<<20)
	root := filepath.Join(disk, "tasks")
	list := filepath.Join(root, "l")
	if err := os.MkdirAll(list, 0o700); err != nil {
		t.Fatal(err)
	}
	const n = 12
	m := t.TempDir()    // on another file system: the agents' marks
	gate := t.TempDir() // the agents end once gate/go exists
	h := startDaemonProcHarness(t, root, 2)
	keepOnFailure(t, disk, h.logs)
	for i := 1; i <= n; i++ {
		h.drop("l", strconv.Itoa(i), execTask("task "+strconv.Itoa(i),
			"echo ran >> "+m+"/$TASKD_TASK_ID; while [ ! -e "+gate+"/go ]; do sleep 0.02; done"))
	}
	h.waitFor("two agents to run", 30*time.Second, func() bool { return len(readDirNames(m)) >= 2 })
	running := readDirNames(m) // two slots: these two, waiting for the gate
	fill(t, filepath.Join(disk, "filler"))
	if err := os.WriteFile(filepath.Join(gate, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The agents that ran end on a full disk: their ends are held, their
	// results kept elsewhere. Every other task has started (claimed
	// before the disk filled up) or is held.
	heldEnds := func(st map[string]status.Task) bool {
		for _, id := range running {
			if !strings.Contains(st[id].Held, "the end of attempt 1 is not recorded yet") {
				return false
			}
		}
		return true
	}
	var st map[string]status.Task
	ok := waitUntilOrTimeout(60*time.Second, func() bool {
		st = statusJSON(t, root, "l")
		for i := 1; i <= n; i++ {
			id := strconv.Itoa(i)
			if st[id].Held == "" && readString(m, id) == "" {
				return false
			}
		}
		return heldEnds(st)
	})
	if !ok {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			id := strconv.Itoa(i)
			fmt.Fprintf(&b, "%s: state %q, held %q, ran %v\n", id, st[id].State, st[id].Held, readString(m, id) != "")
		}
		t.Fatalf("timed out waiting for the ends of the running attempts (%v) to be held, and every task started or held:\n%sdaemon log:\n%s", running, b.String(), h.p.log)
	}
	for id, ts := range st {
		if ts.Held != "" && !strings.Contains(ts.Held, "no space left on device") {
			t.Errorf("task %s is held for %q, want the full disk named", id, ts.Held)
		}
	}
	kept := map[string]string{}
	for _, id := range running {
		runDir := filepath.Join(list, ".taskd", "runs", id, "1")
		path, err := agent.KeptResult(runDir)
		if err != nil {
			t.Fatal(err)
		}
		if !fileExists(path) || fileExists(filepath.Join(runDir, "result.json")) {
			t.Fatalf("task %s: the result is not kept at %s (or the full run folder took it)", id, path)
		}
		kept[id] = path
	}
	// While the disk is full no agent starts, and the daemon does not
	// spin.
	started := len(readDirNames(m))
	cpu0, at := cpuTime(t, h.p.cmd.Process.Pid), time.Now()
	waitUntilOrTimeout(4*time.Second, func() bool { return false })
	if got := len(readDirNames(m)); got != started {
		t.Errorf("%d agents started while the disk was full", got-started)
	}
	if used, over := cpuTime(t, h.p.cmd.Process.Pid)-cpu0, time.Since(at); used > over/10 {
		t.Errorf("the daemon used %s of CPU in %s while the disk was full", used, over.Round(time.Millisecond))
	}
	if started >= n {
		t.Fatalf("every task started before the disk was full: nothing was held back")
	}

	// Stopped while the ends are held: the daemon exits, the results stay
	// kept. Started again on the still full disk, it finds them and holds
	// the ends again; killed then, the results are still kept.
	h.stopProc()
	// The stop took back the claims of the tasks prepared ahead of a slot,
	// whose starts could not be written, and removed what was prepared for
	// them: the disk is filled again.
	fill(t, filepath.Join(disk, "filler2"))
	for id, path := range kept {
		if !fileExists(path) {
			t.Fatalf("task %s: the kept result is gone after the daemon stopped", id)
		}
		if tf := h.read("l", id); stateOf(tf) != task.Running {
			t.Fatalf("task %s: %q, want still running (its end not recorded)", id, stateOf(tf))
		}
	}
	h.restartProc(2)
	h.waitFor("the restarted daemon to hold the ends again", 30*time.Second, func() bool { return heldEnds(statusJSON(t, root, "l")) })
	h.p.kill(t)
	for id, path := range kept {
		if !fileExists(path) {
			t.Fatalf("task %s: the kept result is gone after the daemon was killed", id)
		}
	}

	// Room again, and a daemon: everything ends.
	for _, name := range []string{"filler", "filler2"} {
		if err := os.Remove(filepath.Join(disk, name)); err != nil {
			t.Fatal(err)
		}
	}
	h.restartProc(2)
	if !waitUntilOrTimeout(90*time.Second, func() bool { return allTerminal(list) }) {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			tf := h.read("l", strconv.Itoa(i))
			fmt.Fprintf(&b, "%d: %s %q %s\n", i, tf.Status, stateOf(tf), tdString(tf, "error"))
		}
		t.Fatalf("not every task ended:\n%s\ndaemon log:\n%s", b.String(), h.p.log)
	}
	for id, ts := range statusJSON(t, root, "l") {
		if ts.Held != "" {
			t.Errorf("task %s is still shown held: %s", id, ts.Held)
		}
	}
	// A task file shows its end a moment before the end's event is
	// logged: the events are counted once the daemon has stopped, its jobs
	// done.
	h.stopProc()
	evs, err := eventlog.Read(list)
	if err != nil {
		t.Errorf("the event log: %v", err)
	}
	for i := 1; i <= n; i++ {
		id := strconv.Itoa(i)
		tf := h.read("l", id)
		if s := stateOf(tf); s != task.Succeeded {
			t.Errorf("task %s ended %q", id, s)
		}
		if got := readString(m, id); got != "ran\n" {
			t.Errorf("task %s ran %d times", id, strings.Count(got, "ran"))
		}
		if a, _ := tf.Metadata.Object("taskd").Int("attempt"); a != 1 {
			t.Errorf("task %s: attempt %d, want 1", id, a)
		}
	}
	for id, path := range kept {
		if fileExists(path) {
			t.Errorf("task %s: the kept result is still there once its end is recorded", id)
		}
		if _, ok := agent.ReadResult(filepath.Join(list, ".taskd", "runs", id, "1")); !ok || !fileExists(filepath.Join(list, ".taskd", "runs", id, "1", "result.json")) {
			t.Errorf("task %s: the run folder did not take the result once there was room", id)
		}
		for _, typ := range []string{eventlog.TaskStarted, eventlog.TaskInterrupted} {
			if c := countEvents(evs, typ, id); c > 1 || typ == eventlog.TaskInterrupted && c > 0 {
				t.Errorf("task %s: %d %s events:\n%s", id, c, typ, eventsOf(evs, id))
			}
		}
		if c := countEvents(evs, eventlog.TaskSucceeded, id); c != 1 {
			t.Errorf("task %s: %d TaskSucceeded events, want its end recorded once:\n%s", id, c, eventsOf(evs, id))
		}
	}
}

// lockHold is how long Claude Code's lock is held in
// TestTrust_ClaudeCodeLockHeld: 30 s, three times the 10 s after which a
// lock nobody refreshes counts as abandoned.
const lockHold = 30 * time.Second

// TestTrust_ClaudeCodeLockHeld: Claude Code (the real proper-lockfile,
// with Claude Code's options) holds a task file's lock, refreshing it,
// for lockHold (30 s), beyond the 10 s after which a lock nobody
// refreshes counts as abandoned. Meanwhile the task,
// dropped just after the lock was taken, does not start, and taskd status
// says what it waits for; the lock is never broken (its holder releases
// it cleanly); once it is released the task runs, once. The test runs in
// parallel with the others: the hold adds nothing to the suite's time.
func TestTrust_ClaudeCodeLockHeld(t *testing.T) {
	t.Parallel()
	node := nodeToolsDir(t)
	h := startDaemon(t, []string{"l"})
	m := t.TempDir()
	file := filepath.Join(h.listDir("l"), "1.json")
	// A task of Claude Code's own, not taskd's, whose lock is taken.
	if err := os.WriteFile(file, []byte(`{"id": "1", "subject": "plan", "description": "", "activeForm": "planning", "status": "pending", "blocks": [], "blockedBy": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	holder := exec.Command("node", filepath.Join(node, "lock-hold.js"), file)
	stdin, _ := holder.StdinPipe()
	stdout, _ := holder.StdoutPipe()
	holder.Stderr = os.Stderr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	lines := bufioLines(stdout)
	if l := <-lines; l != "locked" {
		t.Fatalf("lock-hold.js did not take the lock: %q", l)
	}
	locked := time.Now()
	// Under the lock, the task becomes taskd's (a write that ignores the
	// lock, as a careless writer's would): taskd must wait for the lock.
	h.drop("l", "1", execTask("waits for the lock", "echo ran >> "+m+"/1"))
	sawHeld := false
	for time.Since(locked) < lockHold {
		if readString(m, "1") != "" {
			t.Fatalf("the task started %s after Claude Code took its lock, which it still holds", time.Since(locked).Round(time.Millisecond))
		}
		if tf, err := taskfile.ReadFile(file); err == nil && stateOf(tf) != task.None {
			t.Fatalf("the task file was claimed (%q) under Claude Code's lock", stateOf(tf))
		}
		if fi, err := os.Lstat(file + ".lock"); err != nil || !fi.IsDir() {
			t.Fatalf("Claude Code's lock is gone while it holds it: %v", err)
		}
		if !sawHeld && time.Since(locked) > 4*time.Second {
			st := statusJSON(t, h.root, "l")["1"]
			sawHeld = strings.Contains(st.Held, "waiting for the lock "+file+".lock")
		}
		waitUntilOrTimeout(100*time.Millisecond, func() bool { return false })
	}
	if !sawHeld {
		t.Errorf("taskd status never said the task waits for the lock")
	}
	io.WriteString(stdin, "release\n")
	if l := <-lines; l != "released" {
		t.Fatalf("Claude Code's lock was broken: lock-hold.js says %q", l)
	}
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	if got := readString(m, "1"); got != "ran\n" {
		t.Errorf("the task ran %q, want once", got)
	}
	if st := statusJSON(t, h.root, "l")["1"]; st.Held != "" {
		t.Errorf("still shown held: %s", st.Held)
	}
	holder.Wait()
	t.Logf("held Claude Code's lock for %s", time.Since(locked).Round(time.Second))
}

// bufioLines sends the lines of r on a channel.
func bufioLines(r io.Reader) <-chan string {
	c := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			c <- sc.Text()
		}
		close(c)
	}()
	return c
}

// TestTrust_ClaudeResumesInterruptedAttempt: the real Claude Code CLI,
// against a loopback stub of the Messages API, is interrupted half way:
// the model has asked for a command (a Bash tool call that takes a
// minute), and while it runs the daemon is killed with SIGKILL; the agent
// dies with it. The next daemon kills what is left of the attempt, records
// it interrupted, and runs the next attempt as a continuation of the same
// session — claude --resume with the session id the first attempt was
// given, and a prompt that says it was interrupted — not as a new start:
// the model is sent the conversation so far, the task and its own tool
// call in it.
func TestTrust_ClaudeResumesInterruptedAttempt(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	m := t.TempDir()
	stub := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		if strings.Contains(body, "was interrupted") {
			return claudestub.Turn{Text: `Carried on. {"success": true, "summary": "finished after the interruption"}`}
		}
		if strings.Contains(body, "tool_result") {
			return claudestub.Turn{Text: `{"success": false, "summary": "the command did not finish"}`}
		}
		return claudestub.Turn{Bash: "touch " + m + "/tool; sleep 60"}
	})
	root := newRoot(t, "l")
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	env := stub.Env(t)
	home := strings.TrimPrefix(env[slices.IndexFunc(env, func(s string) bool { return strings.HasPrefix(s, "HOME=") })], "HOME=")
	data, _ := json.Marshal(config.FileConfig{Profiles: map[string]config.ProfileSpec{"claude": {
		Command: []string{bin, "-p", "--output-format", "json", "--allowedTools", "Bash"}, Prompt: "stdin", Output: "claude-json",
		Env: env, Timeout: "2m"}}})
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, root: root, logs: &syncBuffer{}}
	p := startDaemonProc(t, root, 2, "TASKD_TEST_CONFIG="+cfgPath)
	h.drop("l", "1", `{"subject": "greet", "owner": "taskd:claude", "description": "Write the greeting. TASK-MARKER-7d1"}`)
	h.waitFor("the agent's tool call to run", 60*time.Second, func() bool { return fileExists(filepath.Join(m, "tool")) })
	run1 := filepath.Join(root, "l", ".taskd", "runs", "1", "1")
	var cmd1 struct {
		PID       int    `json:"pid"`
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal([]byte(readString(run1, "cmd.json")), &cmd1)
	if cmd1.SessionID == "" || cmd1.PID == 0 {
		t.Fatalf("attempt 1's cmd.json records no session or process: %s", readString(run1, "cmd.json"))
	}
	// Killed once the CLI has written its transcript so far (it writes it
	// as it goes): the session can be continued.
	h.waitFor("the session's transcript to hold the tool call", 30*time.Second, func() bool {
		found, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", cmd1.SessionID+".jsonl"))
		return len(found) == 1 && strings.Contains(readString(filepath.Dir(found[0]), filepath.Base(found[0])), "tool_use")
	})
	p.kill(t)
	h.waitFor("the agent to die with the daemon", 10*time.Second, func() bool { return !alivePid(cmd1.PID) })
	p = startDaemonProc(t, root, 2, "TASKD_TEST_CONFIG="+cfgPath)
	h.logs = p.log
	tf := h.waitState("l", "1", task.Succeeded, 2*time.Minute)
	p.term(t)
	if s, _ := tf.Metadata.Object("taskd").Object("result").String("summary"); s != "finished after the interruption" {
		t.Errorf("summary %q", s)
	}
	var cmd2 struct {
		Argv []string `json:"argv"`
	}
	json.Unmarshal([]byte(readString(filepath.Join(root, "l", ".taskd", "runs", "1", "2"), "cmd.json")), &cmd2)
	if i := slices.Index(cmd2.Argv, "--resume"); i < 0 || i+1 >= len(cmd2.Argv) || cmd2.Argv[i+1] != cmd1.SessionID || slices.Contains(cmd2.Argv, "--session-id") {
		t.Errorf("attempt 2 ran %q, want --resume %s", cmd2.Argv, cmd1.SessionID)
	}
	bodies := stub.Bodies()
	last := bodies[len(bodies)-1]
	for _, want := range []string{"TASK-MARKER-7d1", "touch " + m + "/tool", "was interrupted"} {
		if !strings.Contains(last, want) {
			t.Errorf("the resumed attempt's request lacks %q: %.600s", want, last)
		}
	}
	if n := countEvents(h.events("l"), eventlog.TaskInterrupted, "1"); n != 1 {
		t.Errorf("%d TaskInterrupted events, want 1", n)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestTrust_UpwardVisibility: a grandchild that needs a person shows on
// its parent and on its grandparent — a ChildNeedsAttention event on each,
// and taskd status marks the path (below:) — and a queued child its parent
// never ran is cancelled, with the reason, once the parent has ended.
func TestTrust_UpwardVisibility(t *testing.T) {
	t.Parallel()
	h := startDaemonWithCLI(t, []string{"l"})
	h.addWorkflow("l", "ask", `{"id": "ask", "name": "ask", "nodes": {
  "start": {"type": "start"},
  "work": {"type": "task", "name": "Work", "command": "true"},
  "decide": {"type": "end", "result": "blocked", "escalation": "hitl", "name": "Needs a decision", "description": "Choose the colour."}},
 "edges": [{"from": "start", "to": "work"}, {"from": "work", "to": "decide"}]}`)
	waiting := func(id, parent string, kids ...string) string {
		p := ""
		if parent != "" {
			p = fmt.Sprintf(`, "parent": %q`, parent)
		}
		k, _ := json.Marshal(kids)
		return fmt.Sprintf(`{"id": %q, "subject": "level %s", "description": "", "activeForm": "w", "status": "in_progress", "owner": "taskd", "blocks": [], "blockedBy": [],
  "metadata": {"taskd": {"agent": "exec", "prompt": "exit 0", "state": "waiting", "attempt": 1, "children": {"parallel": %s}%s}}}`, id, id, k, p)
	}
	h.drop("l", "1", waiting("1", "", "2"))
	h.drop("l", "2", waiting("2", "1", "3"))
	h.drop("l", "3", flowTask("3", "ask", "pick a colour", `{"parent": "2"}`))
	h.waitState("l", "3", task.NeedsHuman, 20*time.Second)
	for _, id := range []string{"2", "1"} {
		evs := h.waitEvents("l", eventlog.ChildNeedsAttention, id, 1)
		for _, e := range evs {
			if e.Type == eventlog.ChildNeedsAttention && e.Task == id && (e.Data["descendant"] != "3" || e.Data["state"] != "needs_human" || !strings.Contains(fmt.Sprint(e.Data["reason"]), "Needs a decision")) {
				t.Errorf("task %s: %v", id, e.Data)
			}
		}
	}
	st := statusJSON(t, h.root, "l")
	for _, id := range []string{"1", "2"} {
		if b := st[id].Below; len(b) != 1 || b[0].ID != "3" || b[0].State != "needs_human" {
			t.Errorf("status of %s: below %v, want 3 needs_human", id, b)
		}
	}

	// A queued child left unstarted when its parent ends is cancelled.
	m := t.TempDir()
	h.drop("l", "10", execTask("pushes and leaves", `taskd push name=later "echo ran >> `+m+`/later"`))
	h.waitState("l", "10", task.Succeeded, 20*time.Second)
	later := findNamed(t, h, "l", "later")
	tf := h.waitState("l", later, task.Cancelled, 20*time.Second)
	if msg := tdString(tf, "error"); !strings.Contains(msg, "its parent 10 ended (succeeded) without starting it") {
		t.Errorf("the queued child's error %q does not say why", msg)
	}
	if readString(m, "later") != "" {
		t.Errorf("the queued child ran")
	}
}
