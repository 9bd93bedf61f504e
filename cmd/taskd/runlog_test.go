package main

import (
	"github.com/taskd/taskd/internal/syncbuf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunLog: the foreground daemon logs, at its default level, one line
// when a task's work starts and one when the task ends (with its list, id,
// subject, outcome and how long it ran), and nothing else while it runs
// tasks or idles, however often it rescans. The golden file holds the
// lines of a run of three tasks: one succeeds, one fails, one is
// cancelled; times, durations and paths are normalised. Update it with
// -update.
func TestRunLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root := filepath.Join(dir, "tasks")
	cfg := filepath.Join(dir, "config.json")
	// A rescan every 50ms: the idle daemon must not log them.
	if err := os.WriteFile(cfg, []byte(`{"scheduling": "normal", "rescan": "50ms"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	cmd := exec.Command(os.Args[0], "run", "--root", root, "--config", cfg)
	cmd.Env = append(os.Environ(), "TASKD_TEST_MAIN=1", "XDG_CONFIG_HOME="+dir, "TASKD_ROOT=", "TASKD_LIST=", "TASKD_TASK_FILE=")
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		}
	}
	t.Cleanup(stop)
	lines := func(msg string) int { return strings.Count(logs.String(), "msg=\""+msg+"\"") }
	waitUntil(t, "the daemon to start", 30*time.Second, func() bool { return lines("taskd started") == 1 })

	submit := func(subject, script string) {
		t.Helper()
		mustCLI(t, "submit", "--root", root, "--list", "work", "--agent", "exec", "--subject", subject, script)
	}
	submit("Say hello to everyone on the team, in a message that is longer than a log line shows", "echo hello")
	waitUntil(t, "task 1 to end", 30*time.Second, func() bool { return lines("task ended") == 1 })
	submit("Fail on purpose", "echo broken >&2; exit 3")
	waitUntil(t, "task 2 to end", 30*time.Second, func() bool { return lines("task ended") == 2 })
	submit("Sleep until cancelled", "exec sleep 60")
	waitUntil(t, "task 3 to start", 30*time.Second, func() bool { return lines("task started") == 3 })
	mustCLI(t, "cancel", "--root", root, "work/3")
	waitUntil(t, "task 3 to end", 30*time.Second, func() bool { return lines("task ended") == 3 })
	mustCLI(t, "submit", "--root", root, "--list", "work", "--workflow", "demo", "--subject", "Walk the demo workflow")
	waitUntil(t, "task 4 to end", 30*time.Second, func() bool { return lines("task ended") == 4 })
	// The idle daemon rescans (each time it opens the list's directory to
	// read it) ten times, and must log none of it.
	rescans := dirOpens(t, filepath.Join(root, "work"))
	waitUntil(t, "ten rescans of the idle daemon", 30*time.Second, func() bool { return rescans() >= 10 })
	stop()

	got := normaliseLog(logs.String(), dir)
	golden := filepath.Join("testdata", "runlog.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the daemon's log:\n%s\nwant (%s):\n%s", got, golden, want)
	}
}

var (
	logTime     = regexp.MustCompile(`^time=\S+ `)
	logDuration = regexp.MustCompile(`\bran=[0-9.µmnsh]+`)
	logPID      = regexp.MustCompile(`\bpid=\d+`)
	logConc     = regexp.MustCompile(`\bconcurrency=\d+`)
	logSup      = regexp.MustCompile(`\bsupervision=\w+`)
)

// normaliseLog takes out of a log what changes from run to run: times,
// durations, the temporary directory, the pid and the number of CPUs.
func normaliseLog(s, dir string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		l = logTime.ReplaceAllString(l, "")
		l = logDuration.ReplaceAllString(l, "ran=D")
		l = logPID.ReplaceAllString(l, "pid=PID")
		l = logConc.ReplaceAllString(l, "concurrency=N")
		l = logSup.ReplaceAllString(l, "supervision=MODE") // cgroup or environment, as the machine allows
		l = strings.ReplaceAll(l, dir, "DIR")
		b.WriteString(l + "\n")
	}
	return b.String()
}

// lockedBuffer is a log that a process or goroutine writes while the test
// reads it.
type lockedBuffer = syncbuf.Buffer
