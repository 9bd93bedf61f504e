package daemon_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// swapForLink replaces the directory at path with a link to target, as
// an agent (or anyone with the user's rights) could once a task ended.
func swapForLink(t *testing.T, path, target string) {
	t.Helper()
	if err := os.Rename(path, path+".was"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// refusedEvent waits for a PathRefused event of task id saying what.
func (h *harness) refusedEvent(list, id, what string) {
	h.t.Helper()
	h.waitFor("PathRefused of "+id+" saying "+what, 30*time.Second, func() bool {
		return slices.ContainsFunc(h.events(list), func(e eventlog.Event) bool {
			data, _ := json.Marshal(e.Data)
			return e.Type == eventlog.PathRefused && e.Task == id && strings.Contains(string(data), what)
		})
	})
}

// TestAttack_WorktreeSwappedForLink: a task's worktree swapped for a
// link to another repository (with changes in it that a commit would
// take) once the task has ended is never followed: not when the task is
// removed with taskd rm, not by retention after the daemon restarts. Each
// refusal is a PathRefused event naming the link; the other repository
// has no new commit and its files and index are as they were; the link
// stays. The control: retention removes a worktree of the same age that
// nobody swapped, its branch kept.
func TestAttack_WorktreeSwappedForLink(t *testing.T) {
	t.Parallel()
	repo, outside := gitRepo(t), gitRepo(t)
	os.WriteFile(filepath.Join(outside, "file.txt"), []byte("uncommitted outside\n"), 0o644)
	outsideHead := gitIn(t, outside, "rev-parse", "HEAD")
	h := startDaemonWithCLI(t, []string{"l"})
	for _, id := range []string{"1", "2", "3"} {
		h.drop("l", id, execTask("edit "+id, "echo "+id+" > file.txt", "taskd.cwd", `"`+repo+`"`, "taskd.worktree", "true"))
	}
	paths := map[string]string{}
	for _, id := range []string{"1", "2", "3"} {
		tf := h.waitState("l", id, task.Succeeded, time.Minute)
		ws, _ := job.WorkspaceOf(tf)
		paths[id] = ws.Path
	}

	// taskd rm of a task whose worktree became a link.
	swapForLink(t, paths["1"], outside)
	if out, err := exec.Command(taskdBinary(t), "rm", "--root", h.root, "l/1").CombinedOutput(); err != nil {
		t.Fatalf("taskd rm: %v\n%s", err, out)
	}
	h.refusedEvent("l", "1", "symbolic link")

	// Retention, at the daemon's next start, of two tasks that ended long
	// ago: one whose worktree became a link, one left as it was.
	swapForLink(t, paths["2"], outside)
	h.stop()
	for _, id := range []string{"2", "3"} {
		p := filepath.Join(h.listDir("l"), id+".json")
		tf, err := taskfile.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		task.Meta(tf).Set("finishedAt", "2020-01-02T03:04:05Z")
		if err := os.WriteFile(p, tf.Marshal(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h.start()
	h.refusedEvent("l", "2", "symbolic link")
	h.waitEvents("l", eventlog.WorktreeRemoved, "3", 1)
	if _, err := os.Lstat(paths["3"]); !os.IsNotExist(err) {
		t.Errorf("retention left the worktree of task 3: %v", err)
	}
	if got := gitIn(t, repo, "show", "taskd/l/3:file.txt"); got != "3" {
		t.Errorf("branch taskd/l/3 has file.txt %q after retention, want the task's work", got)
	}

	if head := gitIn(t, outside, "rev-parse", "HEAD"); head != outsideHead {
		t.Errorf("a commit was made in the repository the links point to:\n%s", gitIn(t, outside, "log", "--oneline"))
	}
	if st := gitIn(t, outside, "status", "--porcelain"); st != "M file.txt" {
		t.Errorf("the other repository's files or index changed: %q", st)
	}
	for _, id := range []string{"1", "2"} {
		if fi, err := os.Lstat(paths[id]); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the link at task %s's worktree was removed or followed: %v", id, err)
		}
	}
	if !strings.Contains(h.logs.String(), "a task's worktree is left where it is") {
		t.Errorf("the daemon's log does not say why the worktrees were left:\n%s", h.logs)
	}
}

// TestAttack_WorktreeHooksSeeNoSecret: in a repository whose hooks and
// core.fsmonitor record their environment, taskd's own git commands
// (making the task's worktree, committing its work) run none of them;
// the agent's own git commands do (they are the agent's business), and
// what they see has no secret of the daemon's environment.
func TestAttack_WorktreeHooksSeeNoSecret(t *testing.T) {
	t.Parallel()
	repo, logs := gitRepo(t), t.TempDir()
	record := func(name string) string {
		return "env >> " + filepath.Join(logs, name) + "; echo --- >> " + filepath.Join(logs, name)
	}
	for _, hook := range []string{"post-checkout", "pre-commit", "post-commit"} {
		p := filepath.Join(repo, ".git", "hooks", hook)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+record(hook)+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, repo, "config", "core.fsmonitor", record("fsmonitor"))
	h := startDaemon(t, []string{"l"})
	// The agent commits one file itself, and leaves another for taskd.
	h.drop("l", "1", execTask("hooks", `echo mine > file.txt && git -c user.name=a -c user.email=a@a commit -q -a -m "the agent's" && echo left > other.txt`,
		"taskd.cwd", `"`+repo+`"`, "taskd.worktree", "true"))
	tf := h.waitState("l", "1", task.Succeeded, time.Minute)
	ws, _ := job.WorkspaceOf(tf)
	if ws.Commit == "" || ws.FilesChanged != 2 {
		t.Errorf("workspace %+v; want the agent's commit and taskd's, 2 files", ws)
	}
	if got := gitIn(t, repo, "log", "--format=%s", ws.Base+"..taskd/l/1"); got != "hooks\nthe agent's" {
		t.Errorf("the branch's commits:\n%s\nwant taskd's on the agent's", got)
	}
	if _, err := os.Stat(filepath.Join(logs, "post-checkout")); !os.IsNotExist(err) {
		t.Errorf("making the worktree ran the repository's post-checkout hook")
	}
	for _, name := range []string{"pre-commit", "post-commit", "fsmonitor"} {
		data, err := os.ReadFile(filepath.Join(logs, name))
		if err != nil {
			t.Errorf("the agent's own commit did not run %s: %v", name, err)
			continue
		}
		if n := strings.Count(string(data), "---\n"); name != "fsmonitor" && n != 1 {
			t.Errorf("%s ran %d times, want once (the agent's commit; not taskd's)", name, n)
		}
		if strings.Contains(string(data), attackSecret) || !strings.Contains(string(data), "TASKD_TASK_ID=1") {
			t.Errorf("%s saw:\n%s\nwant the agent's environment, without the daemon's secret", name, data)
		}
	}
}

// TestWorktree_ListsDoNotCollide: list a's task b-1 and list a-b's task 1
// work in one repository, each in a worktree and on a branch of its own.
func TestWorktree_ListsDoNotCollide(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	h := startDaemon(t, []string{"a", "a-b"})
	h.drop("a", "b-1", execTask("x", "echo a > mine.txt", "taskd.cwd", `"`+repo+`"`, "taskd.worktree", "true"))
	h.drop("a-b", "1", execTask("y", "echo a-b > mine.txt", "taskd.cwd", `"`+repo+`"`, "taskd.worktree", "true"))
	x, _ := job.WorkspaceOf(h.waitState("a", "b-1", task.Succeeded, time.Minute))
	y, _ := job.WorkspaceOf(h.waitState("a-b", "1", task.Succeeded, time.Minute))
	if x.Path == y.Path || x.Branch != "taskd/a/b-1" || y.Branch != "taskd/a-b/1" {
		t.Errorf("worktrees %+v and %+v", x, y)
	}
	for branch, want := range map[string]string{"taskd/a/b-1": "a", "taskd/a-b/1": "a-b"} {
		if got := gitIn(t, repo, "show", branch+":mine.txt"); got != want {
			t.Errorf("%s has mine.txt %q, want %q", branch, got, want)
		}
	}
}
