package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/syncbuf"
	"github.com/taskd/taskd/taskfile"
)

// TestLogs_MadeAtFirstByte: a log is made when the agent writes its first
// byte to it. An attempt of true leaves none, and taskd logs (with and
// without -f) prints nothing for it and says nothing alarming; one that
// writes only to standard error leaves only stderr.log; and taskd logs -f
// on an attempt that says nothing at first waits for its log to appear,
// prints what it writes, and returns when the task ends. Real daemon, real
// processes.
func TestLogs_MadeAtFirstByte(t *testing.T) {
	isolate(t)
	root := filepath.Join(t.TempDir(), "tasks")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(t.TempDir(), "config.json")
	writeTask(t, cfgFile, "{}")
	stopDaemon := startDaemon(t, root, cfgFile)
	defer stopDaemon()

	submit := func(script string) (ref, file string) {
		file = strings.TrimSpace(mustCLI(t, "submit", "--root", root, "--list", "l", "--agent", "exec", script))
		return "l/" + strings.TrimSuffix(filepath.Base(file), ".json"), file
	}
	ended := func(file string) bool {
		tf, _ := taskfile.ReadFile(file)
		return tf != nil && task.Of(tf).Ended()
	}
	runDir := func(ref string) string {
		return filepath.Join(root, "l", ".taskd", "runs", strings.TrimPrefix(ref, "l/"), "1")
	}
	logsIn := func(dir string) []string {
		var got []string
		for _, name := range []string{"stdout.log", "stderr.log", "transcript.log"} {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				got = append(got, name)
			}
		}
		return got
	}

	quiet, quietFile := submit("true")
	errOnly, errFile := submit("echo 'only a warning' >&2")
	waitUntil(t, "both tasks to end", 2*time.Minute, func() bool { return ended(quietFile) && ended(errFile) })
	if got := logsIn(runDir(quiet)); len(got) != 0 {
		t.Errorf("an attempt of true left %v, want no log", got)
	}
	if got := logsIn(runDir(errOnly)); len(got) != 1 || got[0] != "stderr.log" {
		t.Errorf("an attempt that wrote only to standard error left %v, want [stderr.log]", got)
	}
	for _, args := range [][]string{{quiet}, {quiet, "-f"}, {quiet, "--stderr"}, {quiet, "--attempt", "1"}} {
		out, errOut, code := runCLI(t, append([]string{"logs", "--root", root}, args...)...)
		if code != 0 || out != "" || errOut != "" {
			t.Errorf("taskd logs %s = %q, stderr %q, exit %d; want nothing, exit 0", strings.Join(args, " "), out, errOut, code)
		}
	}
	if _, errOut, code := runCLI(t, "logs", "--root", root, "--attempt", "2", quiet); code == 0 || !strings.Contains(errOut, "has no attempt 2") {
		t.Errorf("taskd logs --attempt 2 of a task that ran once: exit %d, %q; want a failure saying so", code, errOut)
	}

	// An attempt that says nothing until it is told to.
	gate := filepath.Join(t.TempDir(), "gate")
	late, lateFile := submit("while ! test -e " + gate + "; do sleep 0.05; done; echo late words")
	waitUntil(t, "the attempt to run", time.Minute, func() bool {
		_, err := os.Stat(filepath.Join(runDir(late), "prompt.md"))
		return err == nil
	})
	var out, errOut syncbuf.Buffer
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { done <- run(ctx, []string{"logs", "--root", root, "-f", late}, &out, &errOut) }()
	if _, err := os.Lstat(filepath.Join(runDir(late), "stdout.log")); err == nil {
		t.Fatal("stdout.log exists before the agent wrote a byte")
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "taskd logs -f to print the late words", time.Minute, func() bool { return strings.Contains(out.String(), "late words") })
	select {
	case err := <-done:
		if err != nil || !ended(lateFile) {
			t.Errorf("taskd logs -f returned %v (task ended: %v)", err, ended(lateFile))
		}
	case <-time.After(time.Minute):
		t.Fatal("taskd logs -f did not return when the task ended")
	}
	if out.String() != "late words\n" || errOut.String() != "" {
		t.Errorf("taskd logs -f printed %q, stderr %q; want the late words alone", out.String(), errOut.String())
	}
}
