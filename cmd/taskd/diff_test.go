package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
)

// TestDiff_FailedAttemptKept: an attempt that fails leaves its edits
// uncommitted in the task's worktree; taskd diff shows them apart, marked
// as not committed, and nothing committed. Run again, the task finds them
// there, succeeds, and its work (both attempts' edits) is committed:
// taskd diff shows it on the branch, and nothing left in the worktree.
func TestDiff_FailedAttemptKept(t *testing.T) {
	isolate(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	repo := t.TempDir()
	writeTask(t, filepath.Join(repo, "work.txt"), "start\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first"}} {
		gitHere(t, repo, args...)
	}
	root := filepath.Join(t.TempDir(), "tasks")
	writeTask(t, filepath.Join(root, "l", ".keep"), "")
	startTestDaemon(t, root, &config.FileConfig{Scheduling: "normal"})
	mustCLI(t, "submit", "--root", root, "--list", "l", "--agent", "exec", "--worktree", "--cwd", repo,
		`echo "attempt $TASKD_ATTEMPT" >> work.txt; [ "$TASKD_ATTEMPT" -ge 2 ]`)
	waitUntil(t, "the first attempt to fail", time.Minute, func() bool { return stateIn(t, root, "l", "1") == task.Failed })

	out := mustCLI(t, "diff", "--root", root, "l/1")
	committed, uncommitted, _ := strings.Cut(out, "NOT COMMITTED")
	if !strings.Contains(committed, "# nothing committed") || !strings.Contains(uncommitted, "+attempt 1") {
		t.Errorf("taskd diff after a failed attempt:\n%s\nwant nothing committed, and its edit marked as not committed", out)
	}

	mustCLI(t, "retry", "--root", root, "l/1")
	waitUntil(t, "the second attempt to succeed", time.Minute, func() bool { return stateIn(t, root, "l", "1") == task.Succeeded })
	if got := gitHere(t, repo, "show", "taskd/l/1:work.txt"); got != "start\nattempt 1\nattempt 2" {
		t.Errorf("the branch has work.txt %q, want both attempts' edits", got)
	}
	out = mustCLI(t, "diff", "--root", root, "l/1")
	if !strings.Contains(out, "+attempt 1\n+attempt 2") || strings.Contains(out, "NOT COMMITTED") || !strings.Contains(out, "# nothing uncommitted") {
		t.Errorf("taskd diff after the success:\n%s", out)
	}
	if stat := mustCLI(t, "diff", "--root", root, "--stat", "l/1"); !strings.Contains(stat, "work.txt | 2 ++") {
		t.Errorf("taskd diff --stat:\n%s", stat)
	}
	if _, errOut, code := runCLI(t, "diff", "--root", root, "l/9"); code != 1 || errOut == "" {
		t.Errorf("taskd diff of a missing task: exit %d, %q", code, errOut)
	}
}
