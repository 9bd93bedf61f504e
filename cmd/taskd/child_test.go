package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestChildCommands: the child commands and their old names both work on
// a running task of a real daemon: push, list, start (and run inside a
// task), send, inbox, check, receive, and cancel of a child by its name
// (taskd cancel NAME inside a task, taskd child cancel, taskd kill).
func TestChildCommands(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	t.Setenv("TASKD_ROOT", root)
	startTestDaemon(t, root, &config.FileConfig{})
	mustCLI(t, "submit", "--root", root, "--list", "l", "--agent", "exec", "exec sleep 60")
	waitUntil(t, "the parent to run", 30*time.Second, func() bool { return stateIn(t, root, "l", "1") == task.Running })

	pushed := map[string]string{}
	for _, args := range [][]string{
		{"child", "push", "--task", "l/1", "name=a", "agent=exec", "exec sleep 60"},
		{"push", "--task", "l/1", "name=b", "agent=exec", "exec sleep 60"},
		{"child", "push", "--task", "l/1", "name=c", "agent=exec", "exec sleep 60"},
		{"push", "--task", "l/1", "name=d", "agent=exec", "exec sleep 60"},
	} {
		name := strings.TrimPrefix(args[len(args)-3], "name=")
		pushed[name] = strings.TrimSpace(mustCLI(t, args...))
	}
	newList := mustCLI(t, "child", "list", "--task", "l/1")
	oldList := mustCLI(t, "queue", "--task", "l/1")
	if newList != oldList || strings.Count(newList, "queued\n") != 4 {
		t.Errorf("child list:\n%s\nqueue:\n%s\nwant the same four queued children", newList, oldList)
	}
	if got := mustCLI(t, "child", "start", "--task", "l/1", "2"); got != pushed["a"]+"\n"+pushed["b"]+"\n" {
		t.Errorf("child start 2 started %q, want a and b", got)
	}
	if got := mustCLI(t, "run", "--task", "l/1", "1"); got != pushed["c"]+"\n" {
		t.Errorf("run --task l/1 1 (the alias) started %q, want c", got)
	}
	for _, n := range []string{"a", "b", "c"} {
		// Running, or claimed and starting: the parent holds one of the
		// two slots (the default concurrency here), so two children wait.
		waitUntil(t, "child "+n+" to run", 30*time.Second, func() bool { return stateIn(t, root, "l", pushed[n]).Claimed() })
	}

	mustCLI(t, "child", "send", "l/1", "first")
	mustCLI(t, "send", "l/1", "second")
	for _, args := range [][]string{{"child", "inbox", "--task", "l/1"}, {"inbox", "--task", "l/1"}} {
		if got := mustCLI(t, args...); !strings.Contains(got, "first") || !strings.Contains(got, "second") {
			t.Errorf("%v: %q, want both messages", args, got)
		}
	}
	if got := mustCLI(t, "child", "check", "--task", "l/1"); !strings.Contains(got, "first") {
		t.Errorf("child check: %q, want the first message", got)
	}
	if got := mustCLI(t, "check", "--task", "l/1"); !strings.Contains(got, "second") {
		t.Errorf("check: %q, want the second message", got)
	}
	for _, args := range [][]string{{"child", "receive", "--task", "l/1", "--timeout", "50ms"}, {"receive", "--task", "l/1", "--timeout", "50ms"}} {
		if _, errOut, code := runCLI(t, args...); code != 1 || !strings.Contains(errOut, "no message") {
			t.Errorf("%v on an empty inbox: exit %d, %q; want 1", args, code, errOut)
		}
	}

	// Inside the parent's agent: its environment names its task.
	t.Setenv("TASKD_TASK_FILE", filepath.Join(root, "l", "1.json"))
	if out, errOut, code := runCLI(t, "cancel", "a"); code != 0 || out != "l/"+pushed["a"]+" cancel requested\n" {
		t.Errorf("cancel a inside the task: exit %d, %q %q", code, out, errOut)
	}
	if out, errOut, code := runCLI(t, "child", "cancel", "b"); code != 0 || !strings.Contains(out, pushed["b"]+" cancelled") {
		t.Errorf("child cancel b: exit %d, %q %q", code, out, errOut)
	}
	if out, errOut, code := runCLI(t, "kill", "c"); code != 0 || !strings.Contains(out, pushed["c"]+" cancelled") {
		t.Errorf("kill c: exit %d, %q %q", code, out, errOut)
	}
	if got := mustCLI(t, "run"); got != pushed["d"]+"\n" {
		t.Errorf("run inside a task (the alias) started %q, want d", got)
	}
	if _, errOut, code := runCLI(t, "cancel", "nosuch"); code != 1 || !strings.Contains(errOut, "nor is it a child of task l/1") {
		t.Errorf("cancel of a name that is neither: exit %d, %q", code, errOut)
	}
	for _, n := range []string{"a", "b", "c"} {
		waitUntil(t, "child "+n+" to be cancelled", 30*time.Second, func() bool { return stateIn(t, root, "l", pushed[n]) == task.Cancelled })
	}
	if _, errOut, code := runCLI(t, "cancel", "--root", root, "l/1"); code != 0 {
		t.Errorf("cancel l/1: exit %d, %q", code, errOut)
	}
	waitUntil(t, "the parent to be cancelled", 30*time.Second, func() bool { return stateIn(t, root, "l", "1") == task.Cancelled })
}

// TestRetry: taskd retry runs a failed task again, and so does its old
// name, taskd start with task names.
func TestRetry(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	startTestDaemon(t, root, &config.FileConfig{})
	runs := filepath.Join(t.TempDir(), "runs")
	mustCLI(t, "submit", "--root", root, "--list", "l", "--agent", "exec", "echo run >> "+runs+"; exit 3")
	attempt := func(n int) {
		t.Helper()
		waitUntil(t, "the task to fail", 30*time.Second, func() bool {
			tf := readTaskFile(t, filepath.Join(root, "l", "1.json"))
			a, _ := tf.Metadata.Object("taskd").Int("attempt")
			return task.Of(tf) == task.Failed && int(a) == n
		})
	}
	attempt(1)
	if out := mustCLI(t, "retry", "--root", root, "1"); out != "l/1 will run\n" {
		t.Errorf("retry 1: %q", out)
	}
	attempt(2)
	if out := mustCLI(t, "start", "--root", root, "l/1"); out != "l/1 will run\n" {
		t.Errorf("start l/1 (the alias of retry): %q", out)
	}
	attempt(3)
	if _, errOut, code := runCLI(t, "retry", "--root", root, "l/9"); code != 1 || !strings.Contains(errOut, "l/9") {
		t.Errorf("retry of a task that does not exist: exit %d, %q", code, errOut)
	}
}

// mustCLI runs taskd with args and fails the test unless it exits 0.
func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("taskd %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

func readTaskFile(t *testing.T, path string) *taskfile.Task {
	t.Helper()
	tf, err := taskfile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return tf
}
