package daemon_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestDaemon_ManyTasksInDependencyOrder drops 200 exec tasks at once, a third
// of them in blockedBy chains and some blocked by random earlier tasks; all
// complete, each exactly once, every blocker before its dependents, with
// events and results recorded.
func TestDaemon_ManyTasksInDependencyOrder(t *testing.T) {
	t.Parallel()
	const n = 200
	h := startDaemon(t, []string{"work"})
	order := filepath.Join(t.TempDir(), "order.txt")
	rng := rand.New(rand.NewPCG(1, 2))
	blockers := map[int][]int{}
	for i := 1; i <= n; i++ {
		var b []int
		switch {
		case i > 50 && i <= 120: // one long chain
			b = []int{i - 1}
		case i > 120 && i%3 == 0:
			b = []int{1 + rng.IntN(i-1), 1 + rng.IntN(i-1)}
		}
		blockers[i] = b
	}
	// Dropped in a shuffled order, so blockers often arrive after their
	// dependents.
	ids := rng.Perm(n)
	for _, k := range ids {
		i := k + 1
		var by []string
		for _, b := range blockers[i] {
			by = append(by, fmt.Sprintf("%q", fmt.Sprint(b)))
		}
		h.drop("work", fmt.Sprint(i), execTask(fmt.Sprintf("task %d", i), fmt.Sprintf("echo %d >> %s", i, order),
			"blockedBy", "["+strings.Join(by, ",")+"]", "id", fmt.Sprintf("%q", fmt.Sprint(i))))
	}
	h.waitFor("all 200 tasks to complete", 2*time.Minute, func() bool {
		data, _ := os.ReadFile(order)
		return strings.Count(string(data), "\n") >= n
	})
	for i := 1; i <= n; i++ {
		h.waitState("work", fmt.Sprint(i), task.Succeeded, 10*time.Second)
	}
	data, _ := os.ReadFile(order)
	lines := strings.Fields(string(data))
	pos := map[string]int{}
	for p, id := range lines {
		if _, dup := pos[id]; dup {
			t.Errorf("task %s ran twice", id)
		}
		pos[id] = p
	}
	if len(lines) != n {
		t.Errorf("%d runs, want %d", len(lines), n)
	}
	for i, bs := range blockers {
		for _, b := range bs {
			if pos[fmt.Sprint(b)] > pos[fmt.Sprint(i)] {
				t.Errorf("task %d ran before its blocker %d", i, b)
			}
		}
	}
	evs := h.waitEvents("work", eventlog.TaskSucceeded, "", n)
	for i := 1; i <= n; i++ {
		id := fmt.Sprint(i)
		if got := countEvents(evs, eventlog.TaskStarted, id); got != 1 {
			t.Errorf("task %s: %d TaskStarted events, want 1", id, got)
		}
		if got := countEvents(evs, eventlog.TaskSucceeded, id); got != 1 {
			t.Errorf("task %s: %d TaskSucceeded events, want 1", id, got)
		}
		if _, err := os.Stat(filepath.Join(h.listDir("work"), ".taskd", "runs", id, "1", "result.json")); err != nil {
			t.Errorf("task %s: %v", id, err)
		}
		tf := h.read("work", id)
		if tf.Status != taskfile.StatusCompleted || tf.ActiveForm == "" {
			t.Errorf("task %s: status %q activeForm %q", id, tf.Status, tf.ActiveForm)
		}
	}
}

func TestDaemon_ResultAndFailure(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	h.drop("l", "1", execTask("report", `echo working; echo '{"success": true, "summary": "all good", "answer": "42"}'`))
	h.drop("l", "2", execTask("says no", `echo '{"success": false, "summary": "tests fail", "error": "3 failures"}'`))
	h.drop("l", "3", execTask("exit code", `echo oops >&2; exit 7`, "taskd.retries", "2"))

	t1 := h.waitState("l", "1", task.Succeeded, 10*time.Second)
	res := t1.Metadata.Object("taskd").Object("result")
	if s, _ := res.String("summary"); s != "all good" {
		t.Errorf("summary = %q", s)
	}
	if a, _ := res.String("answer"); a != "42" {
		t.Errorf("answer = %q", a)
	}
	t2 := h.waitState("l", "2", task.Failed, 10*time.Second)
	if t2.Status != taskfile.StatusPending {
		t.Errorf("failed task status = %q, want pending", t2.Status)
	}
	if e, _ := t2.Metadata.Object("taskd").String("error"); !strings.HasPrefix(e, "3 failures; logs: ") {
		t.Errorf("error = %q", e)
	}
	// Task 3 fails three times (one attempt and two retries with backoff).
	t3 := h.waitState("l", "3", task.Failed, 20*time.Second)
	if n, _ := t3.Metadata.Object("taskd").Int("attempt"); n != 3 {
		t.Errorf("attempts = %d, want 3", n)
	}
	if got := countEvents(h.waitEvents("l", eventlog.TaskFailed, "3", 3), eventlog.TaskRetrying, "3"); got != 2 {
		t.Errorf("TaskRetrying events = %d, want 2", got)
	}
	stderr, _ := os.ReadFile(filepath.Join(h.listDir("l"), ".taskd", "runs", "3", "3", "stderr.log"))
	if string(stderr) != "oops\n" {
		t.Errorf("stderr.log = %q", stderr)
	}
}

// TestDaemon_RunFolderBeforeStart checks what an agent finds in its run
// folder the moment it starts: its prompt, and no log (each is made at its
// first byte); cmd.json follows with the process group it was started in.
func TestDaemon_RunFolderBeforeStart(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	script := `test -f "$TASKD_RUN_DIR/prompt.md" && ! test -e "$TASKD_RUN_DIR/stdout.log" && ! test -e "$TASKD_RUN_DIR/stderr.log" || exit 3`
	for i := 1; i <= 5; i++ {
		h.drop("l", fmt.Sprint(i), execTask("run folder", script))
	}
	for i := 1; i <= 5; i++ {
		var tf *taskfile.Task
		h.waitFor("task "+fmt.Sprint(i)+" to end", 20*time.Second, func() bool {
			tf = h.read("l", fmt.Sprint(i))
			s := stateOf(tf)
			return s == task.Succeeded || s == task.Failed
		})
		if got := stateOf(tf); got != task.Succeeded {
			e, _ := tf.Metadata.Object("taskd").String("error")
			t.Errorf("task %d: %s (%s): the run folder was not ready when the agent started", i, got, e)
		}
		dir := filepath.Join(h.listDir("l"), ".taskd", "runs", fmt.Sprint(i), "1")
		prompt, err := os.ReadFile(filepath.Join(dir, "prompt.md"))
		if err != nil || !strings.Contains(string(prompt), "TASKD_RUN_DIR") {
			t.Errorf("task %d: prompt.md = %q, %v", i, prompt, err)
		}
		var cmd struct{ Pid int }
		raw, _ := os.ReadFile(filepath.Join(dir, "cmd.json"))
		if err := json.Unmarshal(raw, &cmd); err != nil || cmd.Pid <= 0 {
			t.Errorf("task %d: cmd.json has no process group: %s", i, raw)
		}
	}
}

func TestDaemon_TimeoutAndCancel(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	pidFile := filepath.Join(t.TempDir(), "pid")
	// A task whose agent starts a grandchild in the same process group.
	h.drop("l", "1", execTask("slow", "sleep 60 & echo $! > "+pidFile+"; wait", "taskd.timeout", `"300ms"`))
	t1 := h.waitState("l", "1", task.TimedOut, 20*time.Second)
	if e, _ := t1.Metadata.Object("taskd").String("error"); !strings.HasPrefix(e, "timed out after 300ms") {
		t.Errorf("error = %q", e)
	}
	assertGone(h, pidFile)

	h.drop("l", "2", execTask("cancel me", "sleep 60"))
	h.waitState("l", "2", task.Running, 10*time.Second)
	if _, err := taskfile.Open(h.listDir("l")); err != nil {
		t.Fatal(err)
	}
	dir, _ := taskfile.Open(h.listDir("l"))
	if _, err := dir.Update(t.Context(), "2", func(tf *taskfile.Task) error {
		tf.Metadata.Object("taskd").Set("cancel", true)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h.waitState("l", "2", task.Cancelled, 20*time.Second)
	h.waitEvents("l", eventlog.TaskCancelled, "2", 1)

	// Cancelling a task that has not run: blocked by a task that never ends.
	h.drop("l", "3", execTask("never", "sleep 60"))
	h.drop("l", "4", execTask("blocked", "echo never", "blockedBy", `["3"]`, "taskd.cancel", "true"))
	h.waitState("l", "4", task.Cancelled, 10*time.Second)
}

// assertGone waits for the process whose pid is in file to be gone.
func assertGone(h *harness, pidFile string) {
	h.t.Helper()
	// The shell creates the file before it writes the pid: wait for one.
	var pid int
	h.waitFor("a pid in "+pidFile, 10*time.Second, func() bool {
		data, err := os.ReadFile(pidFile)
		_, serr := fmt.Sscan(string(data), &pid)
		return err == nil && serr == nil && pid > 0
	})
	h.waitFor(fmt.Sprintf("process %d of the agent's group to be gone", pid), 10*time.Second, func() bool {
		return syscall.Kill(pid, 0) != nil
	})
}

func TestDaemon_MissingExecutable(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"ghost": {Command: []string{"no-such-agent-binary"}}}
	})
	h.drop("l", "1", `{"subject": "x", "owner": "taskd:ghost", "description": "do it"}`)
	tf := h.waitState("l", "1", task.Failed, 10*time.Second)
	e, _ := tf.Metadata.Object("taskd").String("error")
	for _, want := range []string{`agent profile "ghost"`, `"no-such-agent-binary" not found on PATH`, `"profiles"`} {
		if !strings.Contains(e, want) {
			t.Errorf("error %q does not contain %q", e, want)
		}
	}
}

func TestDaemon_OnlyItsOwnTasks(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	marker := filepath.Join(t.TempDir(), "ran")
	mine := `{"id":"1","subject":"interactive todo","description":"touch ` + marker + `","activeForm":"x","status":"pending","blocks":[],"blockedBy":[]}`
	h.drop("l", "1", mine)
	h.drop("l", "2", execTask("after", "true", "blockedBy", `["1"]`))
	h.drop("l", "3", execTask("probe", "true"))
	h.waitState("l", "3", task.Succeeded, 10*time.Second)
	if data, _ := os.ReadFile(filepath.Join(h.listDir("l"), "1.json")); string(data) != mine {
		t.Errorf("a task that is not taskd's was written: %s", data)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a task that is not taskd's was run")
	}
	if s := stateOf(h.read("l", "2")); s != "" {
		t.Errorf("task blocked by an unfinished task has state %q", s)
	}
	// Completing the blocker (as Claude Code would) releases its dependent.
	h.drop("l", "1", strings.Replace(mine, `"pending"`, `"completed"`, 1))
	h.waitState("l", "2", task.Succeeded, 10*time.Second)
}

func TestDaemon_SecondDaemonRefuses(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	cfg := *h.cfg
	err := daemon.New(&cfg, discardLogger()).Run(t.Context())
	if !errors.Is(err, daemon.ErrAlreadyRunning) {
		t.Fatalf("second daemon: %v, want ErrAlreadyRunning", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("(pid %d)", os.Getpid())) {
		t.Errorf("message does not name the running daemon: %v", err)
	}
}

func TestDaemon_InsecureRoot(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	os.Chmod(root, 0o777)
	cfg, _ := config.NewConfig(root, nil, nil)
	err := daemon.New(cfg, discardLogger()).Run(t.Context())
	if !errors.Is(err, daemon.ErrInsecure) || !strings.Contains(err.Error(), "chmod go-w "+root) {
		t.Fatalf("Run on a world-writable root: %v", err)
	}
}

// TestDaemon_ListModeChanges: a list other users can write to is not
// served, and is served the moment its mode is fixed, without a restart;
// a served list that becomes writable by others stops starting tasks.
func TestDaemon_ListModeChanges(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"good"})
	shared := filepath.Join(h.root, "shared")
	os.Mkdir(shared, 0o700)
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	notRun := func(id, sentinel string) {
		t.Helper()
		// A task of the good list dropped after it has run, so the daemon
		// has seen the shared one and left it.
		h.drop("good", sentinel, execTask("sentinel", "true"))
		h.waitState("good", sentinel, task.Succeeded, 10*time.Second)
		if s := stateOf(h.read("shared", id)); s != "" {
			t.Fatalf("task %s of a world-writable list has state %q", id, s)
		}
	}
	h.drop("shared", "1", execTask("in a shared list", "true"))
	h.waitFor("the list to be refused", 10*time.Second, func() bool {
		return strings.Contains(h.logs.String(), "not serving list")
	})
	notRun("1", "1")
	os.Chmod(shared, 0o700)
	h.waitState("shared", "1", task.Succeeded, 10*time.Second)

	os.Chmod(shared, 0o757)
	h.waitFor("the list to be refused again", 10*time.Second, func() bool {
		return strings.Count(h.logs.String(), "not serving list") >= 2
	})
	h.drop("shared", "2", execTask("while shared again", "true"))
	notRun("2", "2")
	os.Chmod(shared, 0o755)
	h.waitState("shared", "2", task.Succeeded, 10*time.Second)
}

func TestDaemon_NewListNoticed(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, nil)
	os.Mkdir(filepath.Join(h.root, "fresh"), 0o700)
	// The list's watch is added when it appears; a task dropped right after
	// is seen either by the list's scan or by its watch.
	h.drop("fresh", "1", execTask("new list", "true"))
	h.waitState("fresh", "1", task.Succeeded, 10*time.Second)
	evs := h.waitEvents("fresh", eventlog.TaskSucceeded, "1", 1)
	if !slices.ContainsFunc(evs, func(e eventlog.Event) bool { return e.Type == eventlog.DaemonStarted }) {
		t.Errorf("a list that appeared later has no DaemonStarted event: %v", evs)
	}
}
