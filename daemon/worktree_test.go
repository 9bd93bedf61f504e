package daemon_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// gitRepo makes a repository with one commit of file.txt ("base"), or
// skips the test without git.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base"}} {
		gitIn(t, dir, args...)
	}
	return dir
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestWorktree_ParallelTasksOneRepository: two tasks on one repository,
// each with metadata.taskd.worktree, run at once and edit the same file,
// each in a worktree of its own (in taskd's state directory) on its branch
// taskd/<list>/<id>, which the task records; on success each one's edit is
// committed to its branch, with the task's subject; the repository's own
// checkout is untouched. A child a task pushes gets a worktree too, its
// branch starting at its parent's. When a task file is deleted its
// worktree goes, its uncommitted work committed to its branch, which
// stays.
func TestWorktree_ParallelTasksOneRepository(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	sync := t.TempDir()
	h := startDaemonWithCLI(t, []string{"l"}, func(fc *config.FileConfig) { fc.Concurrency = 3 })
	// Each agent edits file.txt, then waits for the other to have edited
	// it too, so both run at once, and records what it sees.
	edit := `echo "task $TASKD_TASK_ID" > file.txt && touch ` + sync + `/edited-$TASKD_TASK_ID
i=0; while [ ! -e ` + sync + `/edited-1 ] || [ ! -e ` + sync + `/edited-2 ]; do i=$((i+1)); [ $i -gt 6000 ] && exit 9; sleep 0.01; done
pwd > ` + sync + `/pwd-$TASKD_TASK_ID; cat file.txt > ` + sync + `/file-$TASKD_TASK_ID`
	for _, id := range []string{"1", "2"} {
		h.drop("l", id, execTask("edit "+id, edit, "taskd.cwd", `"`+repo+`"`, "taskd.worktree", "true"))
	}
	for _, id := range []string{"1", "2"} {
		tf := h.waitState("l", id, task.Succeeded, time.Minute)
		ws, ok := job.WorkspaceOf(tf)
		dir := job.Worktrees(h.cfg).Path("l", id)
		if !ok || ws.Path != dir || ws.Branch != "taskd/l/"+id || ws.Repo != repo || ws.Commit == "" || ws.FilesChanged != 1 {
			t.Errorf("task %s records worktree %+v (%v)", id, ws, ok)
		}
		if got := gitIn(t, repo, "show", "taskd/l/"+id+":file.txt"); got != "task "+id {
			t.Errorf("branch taskd/l/%s has file.txt %q, want the task's edit committed", id, got)
		}
		if msg := gitIn(t, repo, "log", "-1", "--format=%s", "taskd/l/"+id); msg != "edit "+id {
			t.Errorf("branch taskd/l/%s's commit says %q, want the task's subject", id, msg)
		}
		if got, _ := os.ReadFile(filepath.Join(sync, "pwd-"+id)); strings.TrimSpace(string(got)) != dir {
			t.Errorf("task %s ran in %q, want its worktree %s", id, got, dir)
		}
		if got, _ := os.ReadFile(filepath.Join(sync, "file-"+id)); string(got) != "task "+id+"\n" {
			t.Errorf("task %s saw file.txt %q, want its own edit only", id, got)
		}
		if b := gitIn(t, dir, "rev-parse", "--abbrev-ref", "HEAD"); b != "taskd/l/"+id {
			t.Errorf("task %s's worktree is on %q", id, b)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "file.txt")); string(got) != "base\n" {
		t.Errorf("the repository's checkout changed: %q", got)
	}

	// A child inherits the worktree: its own, on a branch from its
	// parent's (which has a commit the repository's HEAD has not).
	gitIn(t, repo, "checkout", "-q", "-b", "taskd/l/3")
	gitIn(t, repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "the parent's work")
	gitIn(t, repo, "checkout", "-q", "main")
	// A child that says otherwise runs where it says, in no worktree.
	elsewhere := t.TempDir()
	h.drop("l", "3", execTask("parent", "/push name=c agent=exec git rev-parse --abbrev-ref HEAD > "+sync+"/branch-c; git log -1 --format=%s > "+sync+"/log-c\n"+
		"/push name=d agent=exec worktree=false cwd="+elsewhere+" pwd > "+sync+"/pwd-d\n/run\ntrue",
		"taskd.cwd", `"`+repo+`"`, "taskd.worktree", "true"))
	h.waitState("l", "3", task.Succeeded, time.Minute)
	h.waitFor("the child to record its branch", time.Minute, func() bool {
		data, _ := os.ReadFile(filepath.Join(sync, "log-c"))
		return len(data) > 0
	})
	if b, _ := os.ReadFile(filepath.Join(sync, "branch-c")); !strings.HasPrefix(string(b), "taskd/l/") || strings.TrimSpace(string(b)) == "taskd/l/3" {
		t.Errorf("the child ran on branch %q, want one of its own", b)
	}
	if msg, _ := os.ReadFile(filepath.Join(sync, "log-c")); string(msg) != "the parent's work\n" {
		t.Errorf("the child's branch starts at %q, want its parent's branch", msg)
	}
	h.waitFor("the other child to record where it ran", time.Minute, func() bool {
		data, _ := os.ReadFile(filepath.Join(sync, "pwd-d"))
		return len(data) > 0
	})
	if pwd, _ := os.ReadFile(filepath.Join(sync, "pwd-d")); strings.TrimSpace(string(pwd)) != elsewhere {
		t.Errorf("the child that said worktree=false cwd=%s ran in %q", elsewhere, pwd)
	}

	// Deleted, a task's worktree goes; what was left in it uncommitted is
	// on its branch too.
	if err := os.WriteFile(filepath.Join(job.Worktrees(h.cfg).Path("l", "1"), "after.txt"), []byte("after\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(h.listDir("l"), "1.json")); err != nil {
		t.Fatal(err)
	}
	h.waitEvents("l", eventlog.WorktreeRemoved, "1", 1)
	if _, err := os.Stat(job.Worktrees(h.cfg).Path("l", "1")); !os.IsNotExist(err) {
		t.Errorf("the deleted task's worktree is still there (%v)", err)
	}
	if got := gitIn(t, repo, "show", "taskd/l/1:file.txt"); got != "task 1" {
		t.Errorf("branch taskd/l/1 has file.txt %q, want the task's edit", got)
	}
	if got := gitIn(t, repo, "show", "taskd/l/1:after.txt"); got != "after" {
		t.Errorf("branch taskd/l/1 has after.txt %q, want what was left in the worktree", got)
	}
	if msg := gitIn(t, repo, "log", "-1", "--format=%s", "taskd/l/1"); !strings.Contains(msg, "work left uncommitted in the worktree of task l/1") {
		t.Errorf("the commit of what was left says %q", msg)
	}
	if _, err := os.Stat(job.Worktrees(h.cfg).Path("l", "2")); err != nil {
		t.Errorf("the other task's worktree went too: %v", err)
	}
}

// TestWorktree_EarlierPlaceMoved: a task whose worktree an earlier taskd
// made in the list's .taskd/worktrees (under ~/.claude, where Claude Code
// cannot edit), on its branch taskd/<list>-<id>, runs again: its worktree
// is moved to where taskd makes them now, with the work left uncommitted
// in it, and keeps its branch, where its work is committed. A task whose
// worktree is still in the earlier place has it removed from there when
// its file is deleted (here while no daemon runs: the next one sweeps it).
func TestWorktree_EarlierPlaceMoved(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	h := startDaemon(t, []string{"l"})
	old := func(id string) string { return filepath.Join(h.listDir("l"), ".taskd", "worktrees", id) }
	if err := os.MkdirAll(filepath.Join(h.listDir("l"), ".taskd", "worktrees"), 0o700); err != nil {
		t.Fatal(err)
	}
	record := func(id string) string {
		gitIn(t, repo, "worktree", "add", "-q", "-b", "taskd/l-"+id, old(id))
		ws, _ := json.Marshal(map[string]string{"repo": repo, "path": old(id), "branch": "taskd/l-" + id, "dir": old(id)})
		return string(ws)
	}
	ws1 := record("1")
	if err := os.WriteFile(filepath.Join(old("1"), "wip.txt"), []byte("half done\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.drop("l", "1", execTask("finish it", "cat wip.txt > seen.txt && echo done >> wip.txt",
		"taskd.cwd", `"`+repo+`"`, "taskd.worktree", "true", "taskd.workspace", ws1))
	tf := h.waitState("l", "1", task.Succeeded, time.Minute)
	ws, _ := job.WorkspaceOf(tf)
	if ws.Path != job.Worktrees(h.cfg).Path("l", "1") || ws.Branch != "taskd/l-1" || ws.Commit == "" {
		t.Errorf("task 1 records %+v; want the new place, its branch taskd/l-1 kept, a commit", ws)
	}
	if _, err := os.Lstat(old("1")); !os.IsNotExist(err) {
		t.Errorf("the earlier place is still there: %v", err)
	}
	if got := gitIn(t, repo, "show", "taskd/l-1:seen.txt"); got != "half done" {
		t.Errorf("the agent saw wip.txt %q, want the work left in the earlier place", got)
	}

	ws2 := record("2")
	h.drop("l", "2", `{"subject": "ended", "status": "completed", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "true", "worktree": true, "state": "succeeded", "workspace": `+ws2+`}}}`)
	h.stop()
	if err := os.Remove(filepath.Join(h.listDir("l"), "2.json")); err != nil {
		t.Fatal(err)
	}
	h.start()
	h.waitEvents("l", eventlog.WorktreeRemoved, "2", 1)
	if _, err := os.Lstat(old("2")); !os.IsNotExist(err) {
		t.Errorf("the deleted task's worktree in the earlier place is still there: %v", err)
	}
	if b := gitIn(t, repo, "branch", "--list", "taskd/l-2"); b == "" {
		t.Error("the deleted task's branch went with its worktree")
	}
}

// TestWorktree_NothingChanged: a task that changes nothing commits
// nothing: its branch stays where it started, and its record has the
// start and no commit.
func TestWorktree_NothingChanged(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	h := startDaemon(t, []string{"l"})
	h.drop("l", "1", execTask("look only", "cat file.txt", "taskd.cwd", `"`+repo+`"`, "taskd.worktree", "true"))
	tf := h.waitState("l", "1", task.Succeeded, time.Minute)
	ws, _ := job.WorkspaceOf(tf)
	head := gitIn(t, repo, "rev-parse", "main")
	if ws.Base != head || ws.Commit != "" || ws.FilesChanged != 0 {
		t.Errorf("workspace %+v; want base %s and no commit", ws, head)
	}
	if got := gitIn(t, repo, "rev-parse", "taskd/l/1"); got != head {
		t.Errorf("branch taskd/l/1 is at %s, want where it started, %s", got, head)
	}
	raw, _ := tf.Metadata.Object("taskd").Get("workspace")
	if strings.Contains(string(taskfile.AppendJSON(nil, raw)), `"commit"`) {
		t.Errorf("the record names a commit: %s", taskfile.AppendJSON(nil, raw))
	}
}
