package daemon_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/taskfile"
)

// startDaemonClaimAfter starts an in-process daemon on a new root with one
// list "l" and the given Config.ClaimAfter.
func startDaemonClaimAfter(t *testing.T, claimAfter time.Duration) *harness {
	t.Helper()
	root := newRoot(t, "l")
	cfg, err := daemon.NewConfig(root, nil, &daemon.FileConfig{Grace: "2s"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClaimAfter = claimAfter
	h := &harness{t: t, root: root, cfg: cfg, logs: &syncBuffer{}}
	h.start()
	t.Cleanup(h.stop)
	return h
}

// TestLateClaim_ShortTaskOneWrite: a simple task's agent starts before the
// file is marked in_progress (it sees its own file still pending), and the
// end is written with everything the claim would have written.
func TestLateClaim_ShortTaskOneWrite(t *testing.T) {
	h := startDaemonClaimAfter(t, time.Hour)
	out := filepath.Join(t.TempDir(), "1.json")
	content := execTask("short", `cat "$TASKD_TASK_FILE" > `+out)
	h.drop("l", "1", content)
	task := h.waitState("l", "1", daemon.StateSucceeded, 10*time.Second)

	seen, err := taskfile.ReadFile(out)
	if err != nil {
		t.Fatalf("the agent's copy of its task file: %v", err)
	}
	if seen.Status != "" || stateOf(seen) != "" {
		t.Errorf("while the agent ran its file said %q/%q, want it as dropped", seen.Status, stateOf(seen))
	}
	m := task.Metadata.Object("taskd")
	attempt, _ := m.Int("attempt")
	runDir, _ := m.String("runDir")
	startedAt, _ := m.String("startedAt")
	if task.Status != taskfile.StatusCompleted || attempt != 1 || runDir != filepath.Join(".taskd", "runs", "1", "1") || startedAt == "" {
		t.Errorf("final file: status %q attempt %d runDir %q startedAt %q", task.Status, attempt, runDir, startedAt)
	}
	// cmd.json names the file the attempt started from.
	var info struct {
		PID         int `json:"pid"`
		StartedFrom struct {
			SHA256 string `json:"sha256"`
		} `json:"startedFrom"`
	}
	data, _ := os.ReadFile(filepath.Join(h.listDir("l"), runDir, "cmd.json"))
	if err := json.Unmarshal(data, &info); err != nil {
		t.Fatalf("cmd.json: %v\n%s", err, data)
	}
	sum := sha256.Sum256([]byte(content))
	if got, want := info.StartedFrom.SHA256, hex.EncodeToString(sum[:]); got != want || info.PID <= 0 {
		t.Errorf("cmd.json startedFrom.sha256 = %q pid %d, want %q and a pid", got, info.PID, want)
	}
	if n := countEvents(h.events("l"), daemon.EvTaskStarted, "1"); n != 1 {
		t.Errorf("%d TaskStarted events, want 1", n)
	}
}

// TestLateClaim_LongTaskMarkedRunning: an agent still running after
// ClaimAfter finds its file in_progress, with its attempt and start time.
func TestLateClaim_LongTaskMarkedRunning(t *testing.T) {
	h := startDaemonClaimAfter(t, 50*time.Millisecond)
	// The agent waits (10 s at most) until its file says in_progress, and
	// fails if it never does.
	script := `for i in $(seq 200); do grep -q '"in_progress"' "$TASKD_TASK_FILE" && grep -q '"attempt": 1' "$TASKD_TASK_FILE" && exit 0; sleep 0.05; done; exit 1`
	h.drop("l", "1", execTask("long", script))
	task := h.waitState("l", "1", daemon.StateSucceeded, 20*time.Second)
	if task.Status != taskfile.StatusCompleted {
		t.Errorf("status %q", task.Status)
	}
}

// TestLateClaim_NotForTasksWithCommands: a task whose prompt has command
// lines is claimed before its agent starts, as before.
func TestLateClaim_NotForTasksWithCommands(t *testing.T) {
	h := startDaemonClaimAfter(t, time.Hour)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("notes\n"), 0o644)
	out := filepath.Join(dir, "1.json")
	h.drop("l", "1", execTask("with /read", "/read "+filepath.Join(dir, "notes.txt")+"\ncat \"$TASKD_TASK_FILE\" > "+out,
		"taskd.cwd", `"`+dir+`"`))
	h.waitState("l", "1", daemon.StateSucceeded, 10*time.Second)
	seen, err := taskfile.ReadFile(out)
	if err != nil {
		t.Fatalf("the agent's copy of its task file: %v", err)
	}
	if seen.Status != taskfile.StatusInProgress {
		t.Errorf("status while the agent ran = %q, want in_progress", seen.Status)
	}
}

// TestLateClaim_KilledBeforeClaim: the daemon is killed with SIGKILL while
// an unclaimed agent runs (the file still says pending). The next daemon
// finds the attempt by its cmd.json, kills the leftover agent, records the
// attempt as interrupted and runs attempt 2: attempt 1 is not started again.
func TestLateClaim_KilledBeforeClaim(t *testing.T) {
	root := newRoot(t, "l")
	h := &harness{t: t, root: root, logs: &syncBuffer{}}
	dir := t.TempDir()
	marks, pidFile := filepath.Join(dir, "marks"), filepath.Join(dir, "pid")
	p := startDaemonProc(t, root, 2, "TASKD_TEST_CLAIM_AFTER=1h")
	h.drop("l", "1", execTask("killed", `echo $TASKD_ATTEMPT >> `+marks+`; if [ "$TASKD_ATTEMPT" = 1 ]; then sleep 60 & echo $! > `+pidFile+`; wait; fi`))
	h.waitFor("the agent to record its child", 10*time.Second, func() bool {
		data, _ := os.ReadFile(pidFile)
		return len(strings.TrimSpace(string(data))) > 0
	})
	p.kill(t)
	if task := h.read("l", "1"); task.Status != "" || stateOf(task) != "" {
		t.Fatalf("after SIGKILL the file says %q/%q, want it as dropped", task.Status, stateOf(task))
	}

	p2 := startDaemonProc(t, root, 2)
	task := h.waitState("l", "1", daemon.StateSucceeded, 20*time.Second)
	h.logs = p2.log
	assertGone(h, pidFile)
	p2.term(t)
	if attempt, _ := task.Metadata.Object("taskd").Int("attempt"); attempt != 2 {
		t.Errorf("attempt %d, want 2", attempt)
	}
	if got := readString(dir, "marks"); got != "1\n2\n" {
		t.Errorf("attempts run %q, want 1 and 2", got)
	}
	evs := h.events("l")
	var interrupted []int
	for _, e := range evs {
		if e.Type == daemon.EvTaskInterrupted && e.Task == "1" {
			interrupted = append(interrupted, e.Attempt)
		}
	}
	if len(interrupted) != 1 || interrupted[0] != 1 {
		t.Errorf("TaskInterrupted for attempts %v, want [1]", interrupted)
	}
}

// TestLateClaim_RecoversFinishedUnclaimedAttempt: the daemon died after an
// unclaimed agent exited and its result.json was written, before the task
// file recorded it. The next daemon records that result; the task does not
// run again.
func TestLateClaim_RecoversFinishedUnclaimedAttempt(t *testing.T) {
	root := newRoot(t, "l")
	ran := filepath.Join(t.TempDir(), "ran")
	path := filepath.Join(root, "l", "1.json")
	content := []byte(execTask("finished", "touch "+ran))
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(root, "l", ".taskd", "runs", "1", "1")
	os.MkdirAll(runDir, 0o755)
	os.WriteFile(filepath.Join(runDir, "cmd.json"), cmdJSONFrom(t, path, content), 0o644)
	os.WriteFile(filepath.Join(runDir, "result.json"), []byte(`{"success": true, "summary": "done before the crash", "exitCode": 0, "durationMs": 5, "startedAt": "2026-01-02T03:04:05Z"}`), 0o644)

	cfg, _ := daemon.NewConfig(root, nil, nil)
	h := &harness{t: t, root: root, cfg: cfg, logs: &syncBuffer{}}
	h.start()
	defer h.stop()
	task := h.waitState("l", "1", daemon.StateSucceeded, 10*time.Second)
	m := task.Metadata.Object("taskd")
	summary, _ := m.Object("result").String("summary")
	attempt, _ := m.Int("attempt")
	startedAt, _ := m.String("startedAt")
	if summary != "done before the crash" || attempt != 1 || !strings.HasPrefix(startedAt, "2026-01-02T03:04:05") {
		t.Errorf("summary %q attempt %d startedAt %q", summary, attempt, startedAt)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("the finished attempt was run again")
	}
}

// TestLateClaim_SameFileAgainRunsAgain: a task file dropped again with the
// same bytes after its task completed is a new task: the old attempt's
// cmd.json does not make it look finished.
func TestLateClaim_SameFileAgainRunsAgain(t *testing.T) {
	h := startDaemonClaimAfter(t, daemon.DefaultClaimAfter)
	marks := filepath.Join(t.TempDir(), "marks")
	content := execTask("again", "echo ran >> "+marks)
	h.drop("l", "1", content)
	h.waitState("l", "1", daemon.StateSucceeded, 10*time.Second)
	if err := os.Remove(filepath.Join(h.listDir("l"), "1.json")); err != nil {
		t.Fatal(err)
	}
	h.drop("l", "1", content)
	h.waitFor("the task to run a second time", 10*time.Second, func() bool {
		return readString(filepath.Dir(marks), "marks") == "ran\nran\n"
	})
	h.waitState("l", "1", daemon.StateSucceeded, 10*time.Second)
}

// cmdJSONFrom returns a cmd.json naming task file path (with contents
// content) as the file its attempt started from.
func cmdJSONFrom(t *testing.T, path string, content []byte) []byte {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	from := map[string]any{
		"sha256": hex.EncodeToString(sum[:]),
		"inode":  fi.Sys().(*syscall.Stat_t).Ino,
		"mtime":  fi.ModTime().UTC(),
	}
	data, _ := json.Marshal(map[string]any{"argv": []string{"sh", "-c", "true"}, "startedFrom": from})
	return data
}

// TestLateClaim_CancelBeforeClaim: cancelling a simple task whose agent
// runs but is not marked running yet stops the agent, and the end records
// the attempt as the claim would have.
func TestLateClaim_CancelBeforeClaim(t *testing.T) {
	h := startDaemonClaimAfter(t, time.Hour)
	pidFile := filepath.Join(t.TempDir(), "pid")
	h.drop("l", "1", execTask("cancel me", "sleep 60 & echo $! > "+pidFile+"; wait"))
	h.waitFor("the agent to start", 10*time.Second, func() bool {
		data, _ := os.ReadFile(pidFile)
		return len(strings.TrimSpace(string(data))) > 0
	})
	if _, err := daemon.CancelTask(t.Context(), mustOpen(t, h.listDir("l")), "1"); err != nil {
		t.Fatal(err)
	}
	task := h.waitState("l", "1", daemon.StateCancelled, 20*time.Second)
	assertGone(h, pidFile)
	m := task.Metadata.Object("taskd")
	attempt, _ := m.Int("attempt")
	startedAt, _ := m.String("startedAt")
	if attempt != 1 || startedAt == "" || task.Status != taskfile.StatusPending {
		t.Errorf("after cancel: attempt %d startedAt %q status %q", attempt, startedAt, task.Status)
	}
}

func mustOpen(t *testing.T, path string) *taskfile.Dir {
	t.Helper()
	d, err := taskfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestLateClaim_FailedBeforeStartLogsStart: a simple task whose agent
// cannot start (its working directory does not exist) logs its start
// before its failure, as every attempt does.
func TestLateClaim_FailedBeforeStartLogsStart(t *testing.T) {
	h := startDaemon(t, []string{"l"})
	h.drop("l", "1", execTask("no cwd", "true", "taskd.cwd", `"`+filepath.Join(t.TempDir(), "missing")+`"`))
	h.waitState("l", "1", "failed", 10*time.Second)
	evs := h.waitEvents("l", daemon.EvTaskFailed, "1", 1)
	if n := countEvents(evs, daemon.EvTaskStarted, "1"); n != 1 {
		t.Errorf("TaskFailed logged after %d TaskStarted events, want 1", n)
	}
}
