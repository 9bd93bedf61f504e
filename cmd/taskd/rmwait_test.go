package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
)

// TestWait: wait exits 0 when every task succeeded, 1 when one failed or
// does not exist, 124 when its timeout passes first; it says when no
// daemon serves the root.
func TestWait(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	_, errOut, _ := runCLI(t, "submit", "--root", root, "--list", "l", "--agent", "exec", "true")
	if !strings.Contains(errOut, "no daemon serves") {
		t.Errorf("submit without a daemon: stderr %q, want a warning", errOut)
	}
	_, errOut, code := runCLI(t, "wait", "--root", root, "--timeout", "100ms", "l/1")
	if code != exitWaitTimeout || !strings.Contains(errOut, "no daemon serves") || !strings.Contains(errOut, "l/1 has not ended") {
		t.Errorf("wait without a daemon: exit %d, %q; want %d, a warning and the task", code, errOut, exitWaitTimeout)
	}
	startTestDaemon(t, root, &config.FileConfig{})
	runCLI(t, "submit", "--root", root, "--list", "l", "--agent", "exec", "echo broken >&2; exit 3")
	for _, tt := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"l/1"}, 0, "l/1 succeeded\n"},
		{[]string{"1"}, 0, "l/1 succeeded\n"},
		{[]string{"l/1", "l/2"}, 1, "l/2 failed"},
		{[]string{"l/9"}, 1, "l/9 does not exist"},
	} {
		out, errOut, code := runCLI(t, append([]string{"wait", "--root", root, "--timeout", "30s"}, tt.args...)...)
		if code != tt.code || !strings.Contains(out, tt.out) {
			t.Errorf("wait %v: exit %d, %q %q; want exit %d and %q", tt.args, code, out, errOut, tt.code, tt.out)
		}
	}
}

// TestRm: rm removes an ended task's file, run folders and inbox; it
// refuses a running task without --force, and with it the daemon stops
// the task's agent.
func TestRm(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	startTestDaemon(t, root, &config.FileConfig{})
	runCLI(t, "submit", "--root", root, "--list", "l", "--agent", "exec", "true")
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The pid file appears whole (renamed into place): one the shell has
	// only created when rm stops it would name no process.
	runCLI(t, "submit", "--root", root, "--list", "l", "--agent", "exec", "echo $$ > "+pidFile+".new && mv "+pidFile+".new "+pidFile+"; exec sleep 60")
	if _, _, code := runCLI(t, "wait", "--root", root, "--timeout", "30s", "l/1"); code != 0 {
		t.Fatal("task 1 did not succeed")
	}
	list := filepath.Join(root, "l")
	os.MkdirAll(filepath.Join(list, ".taskd", "inbox", "1"), 0o700)
	out, errOut, code := runCLI(t, "rm", "--root", root, "l/1")
	if code != 0 || out != "l/1 removed\n" {
		t.Fatalf("rm l/1: exit %d, %q %q", code, out, errOut)
	}
	for _, p := range []string{"1.json", ".taskd/runs/1", ".taskd/inbox/1"} {
		if _, err := os.Lstat(filepath.Join(list, p)); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", p, err)
		}
	}

	waitUntil(t, "task 2 to run", 30*time.Second, func() bool {
		_, err := os.Stat(pidFile)
		return stateIn(t, root, "l", "2") == task.Running && err == nil
	})
	_, errOut, code = runCLI(t, "rm", "--root", root, "l/2")
	if code != 1 || !strings.Contains(errOut, "is running") || !strings.Contains(errOut, "--force") {
		t.Errorf("rm of a running task: exit %d, %q; want 1 and the way out", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(list, "2.json")); err != nil {
		t.Fatalf("a refused rm removed the file: %v", err)
	}
	if _, errOut, code := runCLI(t, "rm", "--root", root, "--force", "l/2"); code != 0 {
		t.Fatalf("rm --force: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(list, "2.json")); !os.IsNotExist(err) {
		t.Errorf("rm --force left the file: %v", err)
	}
	data, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		t.Fatalf("the agent's pid file holds %q, not a process id", data)
	}
	waitUntil(t, "the removed task's agent to be stopped", 30*time.Second, func() bool {
		_, err := os.Stat("/proc/" + strconv.Itoa(pid))
		return os.IsNotExist(err)
	})
	if _, _, code := runCLI(t, "rm", "--root", root, "l/2"); code != 1 {
		t.Errorf("rm of a missing task: exit %d, want 1", code)
	}
}

// TestRm_ObeysRoot: rm acts only on tasks of its root. A path to a task
// file outside it is refused and nothing is written there (no lock left
// beside it); a path that reaches the root through a link the user made
// is the root's task; a task of Claude Code's own is refused without
// --force and removed with it.
func TestRm_ObeysRoot(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "tasks")
	outside := filepath.Join(base, "outside", "l")
	victim := `{"id": "x", "subject": "victim", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "true"}}}`
	writeTask(t, filepath.Join(outside, "x.json"), victim)
	writeTask(t, filepath.Join(root, "l", "x.json"), victim)
	writeTask(t, filepath.Join(root, "l", "cc.json"), `{"id": "cc", "subject": "plan", "description": "", "activeForm": "planning", "status": "pending", "blocks": [], "blockedBy": []}`)
	if err := os.Symlink(root, filepath.Join(base, "via")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
		say  string
		gone string // the file removed, if any
	}{
		{[]string{filepath.Join(outside, "x.json")}, 1, "is not a task of the root", ""},
		{[]string{"--force", filepath.Join(root, "l", "..", "..", "outside", "l", "x.json")}, 1, "is not a task of the root", ""},
		{[]string{"l/cc"}, 1, "not a taskd task", ""},
		{[]string{filepath.Join(base, "via", "l", "x.json")}, 0, "l/x removed", filepath.Join(root, "l", "x.json")},
		{[]string{"--force", filepath.Join(root, "l", "cc.json")}, 0, "l/cc removed", filepath.Join(root, "l", "cc.json")},
	} {
		out, errOut, code := runCLI(t, append([]string{"rm", "--root", root}, tt.args...)...)
		if code != tt.code || !strings.Contains(out+errOut, tt.say) {
			t.Errorf("rm %v: exit %d, %q %q; want exit %d saying %q", tt.args, code, out, errOut, tt.code, tt.say)
		}
		if tt.gone != "" {
			if _, err := os.Lstat(tt.gone); err == nil {
				t.Errorf("rm %v: %s is still there", tt.args, tt.gone)
			}
		}
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 || entries[0].Name() != "x.json" {
		t.Errorf("outside the root, the list directory holds %v, want x.json alone", entries)
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "x.json")); string(data) != victim {
		t.Errorf("the task file outside the root changed: %q", data)
	}
}

// TestWait_NoDaemonWillRunIt: wait ends at once, as a failure with the
// reason, for a task no daemon will run: one the daemon rejected (an
// unknown agent), a task file that is a link, and a task of Claude Code's
// own; a completed one of Claude Code's is a success. A real daemon
// serves the root, so each could only end by the daemon's hand.
func TestWait_NoDaemonWillRunIt(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	list := filepath.Join(root, "l")
	startTestDaemon(t, root, &config.FileConfig{})
	writeTask(t, filepath.Join(list, "1.json"), `{"id": "1", "subject": "s", "owner": "taskd", "metadata": {"taskd": {"agent": "no-such-agent", "prompt": "true"}}}`)
	writeTask(t, filepath.Join(list, "2.json"), `{"id": "2", "subject": "plan", "description": "", "activeForm": "planning", "status": "pending", "blocks": [], "blockedBy": []}`)
	writeTask(t, filepath.Join(list, "3.json"), `{"id": "3", "subject": "done", "description": "", "activeForm": "done", "status": "completed", "blocks": [], "blockedBy": []}`)
	elsewhere := filepath.Join(t.TempDir(), "4.json")
	writeTask(t, elsewhere, `{"id": "4", "subject": "s", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "true"}}}`)
	if err := os.Symlink(elsewhere, filepath.Join(list, "4.json")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		ref  string
		code int
		say  string
	}{
		{"l/1", 1, `l/1 refused by the daemon: `},
		{"l/2", 1, "l/2 is not addressed to taskd"},
		{"l/3", 0, "l/3 completed"},
		{"l/4", 1, "the file is a symbolic"}, // refused by the daemon, or by wait itself if it is first
	} {
		start := time.Now()
		out, errOut, code := runCLI(t, "wait", "--root", root, "--timeout", "60s", tt.ref)
		if code != tt.code || !strings.Contains(out, tt.say) {
			t.Errorf("wait %s: exit %d after %s, %q %q; want exit %d saying %q", tt.ref, code, time.Since(start).Round(time.Millisecond), out, errOut, tt.code, tt.say)
		}
	}
}
