package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/daemon/worktree"
	"github.com/taskd/taskd/internal/claudestub"
	"github.com/taskd/taskd/taskfile"
)

// TestWorktree_RealClaude: the real Claude Code CLI, run by a real taskd
// daemon (this binary as taskd run) whose HOME is a new directory, so
// that the task root is the default ~/.claude/tasks, edits files in
// three --worktree tasks on one git repository with permission mode
// acceptEdits, all at once. The worktrees are made in ~/.local/state/taskd,
// not under ~/.claude (where the CLI refuses every edit); each task's edit
// is committed on its own branch taskd/l/<id> with the task's subject and
// the agent's summary, without the file the repository ignores that the
// agent wrote too; the repository's own checkout is untouched; the task
// that only read commits nothing. taskd status shows each branch and what
// changed, status --json the commit, and taskd diff the change itself.
func TestWorktree_RealClaude(t *testing.T) {
	bin := claudestub.Binary(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	home := filepath.Join(t.TempDir(), "home")
	root := filepath.Join(home, ".claude", "tasks")
	place := worktree.Place{State: filepath.Join(home, ".local", "state", "taskd"), Root: root}
	repo := t.TempDir()
	for name, content := range map[string]string{
		"calc.py":    "def add(a, b):\n    return a - b\n",
		"notes.txt":  "notes\n",
		".gitignore": "__pycache__/\n",
	} {
		writeTask(t, filepath.Join(repo, name), content)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first"}} {
		gitHere(t, repo, args...)
	}
	start := gitHere(t, repo, "rev-parse", "HEAD")

	// Each task: Read its file, Edit it (the first also writes a file the
	// repository ignores), then report. Which task a request is of is in
	// its prompt; how far it is, in how many tool results it carries.
	file := func(id, name string) string { return filepath.Join(place.Path("l", id), name) }
	stub := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		done := strings.Count(body, `"tool_result"`)
		switch {
		case strings.Contains(body, "FIX-ADD"):
			switch done {
			case 0:
				return claudestub.Read(file("1", "calc.py"))
			case 1:
				return claudestub.Edit(file("1", "calc.py"), "return a - b", "return a + b")
			case 2:
				return claudestub.Turn{Write: map[string]string{"file_path": file("1", "__pycache__/calc.cpython-312.pyc"), "content": "compiled\n"}}
			}
			return claudestub.Turn{Text: `Fixed. {"success": true, "summary": "add adds instead of subtracting"}`}
		case strings.Contains(body, "NOTE-LINE"):
			switch done {
			case 0:
				return claudestub.Read(file("2", "notes.txt"))
			case 1:
				return claudestub.Edit(file("2", "notes.txt"), "notes\n", "notes\nsecond line\n")
			}
			return claudestub.Turn{Text: `Done. {"success": true, "summary": "a second line in the notes"}`}
		case strings.Contains(body, "LOOK-ONLY"):
			if done == 0 {
				return claudestub.Read(file("3", "notes.txt"))
			}
			return claudestub.Turn{Text: `Read it. {"success": true, "summary": "the notes say notes"}`}
		}
		return claudestub.Turn{Text: "ok"}
	})
	var env []string
	for _, kv := range stub.Env(t) {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv) // the CLI's home is the daemon's: ~/.claude is the one it guards
		}
	}
	cfg, _ := json.Marshal(map[string]any{"concurrency": 3, "scheduling": "normal", "profiles": map[string]any{
		"claude": map[string]any{"command": []string{bin, "-p", "--output-format", "stream-json", "--verbose"},
			"prompt": "stdin", "output": "claude-stream", "env": env, "timeout": "3m"}}})
	writeTask(t, filepath.Join(home, ".config", "taskd", "config.json"), string(cfg))

	var logs lockedBuffer
	daemonEnv := []string{"TASKD_TEST_MAIN=1", "HOME=" + home}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "HOME" && (!strings.HasPrefix(name, "XDG_") || name == "XDG_RUNTIME_DIR") && !strings.HasPrefix(name, "TASKD_") && !strings.HasPrefix(name, "CLAUDE_") && !strings.HasPrefix(name, "ANTHROPIC_") {
			daemonEnv = append(daemonEnv, kv)
		}
	}
	cmd := exec.Command(os.Args[0], "run")
	cmd.Env, cmd.Stderr = daemonEnv, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	waitUntil(t, "the daemon to start", time.Minute, func() bool { return strings.Contains(logs.String(), "taskd started") })

	for _, p := range [][2]string{
		{"Fix add", "FIX-ADD: make add in calc.py add."},
		{"Add a line to the notes", "NOTE-LINE: add a second line to notes.txt."},
		{"Look at the notes", "LOOK-ONLY: read notes.txt and change nothing."},
	} {
		mustCLI(t, "submit", "--root", root, "--list", "l", "--worktree", "--permission-mode", "acceptEdits", "--cwd", repo, "--subject", p[0], p[1])
	}
	tasks := map[string]*taskfile.Task{}
	for _, id := range []string{"1", "2", "3"} {
		var tf *taskfile.Task
		waitUntil(t, "task l/"+id+" to succeed", 4*time.Minute, func() bool {
			tf, _ = taskfile.ReadFile(filepath.Join(root, "l", id+".json"))
			if tf != nil && task.Of(tf).Ended() && task.Of(tf) != task.Succeeded {
				t.Fatalf("task l/%s ended %s: %s\ndaemon log:\n%s", id, task.Of(tf), taskfile.AppendJSON(nil, tf.Metadata), logs.String())
			}
			return tf != nil && task.Of(tf) == task.Succeeded
		})
		tasks[id] = tf
	}

	for id, want := range map[string]struct {
		file, content, summary string
	}{
		"1": {"calc.py", "def add(a, b):\n    return a + b", "add adds instead of subtracting"},
		"2": {"notes.txt", "notes\nsecond line", "a second line in the notes"},
	} {
		ws, _ := job.WorkspaceOf(tasks[id])
		branch := "taskd/l/" + id
		if ws.Path != place.Path("l", id) || strings.HasPrefix(ws.Path, filepath.Join(home, ".claude")) || ws.Branch != branch {
			t.Errorf("task %s's worktree is %s on %s; want %s, outside ~/.claude", id, ws.Path, ws.Branch, place.Path("l", id))
		}
		if ws.Base != start || ws.Commit != gitHere(t, repo, "rev-parse", branch) || ws.FilesChanged != 1 || ws.Insertions != 1 {
			t.Errorf("task %s records %+v; want base %s, the branch's commit, 1 file, 1 line added", id, ws, start)
		}
		if got := gitHere(t, repo, "show", branch+":"+want.file); got != want.content {
			t.Errorf("%s has %s %q, want the agent's edit", branch, want.file, got)
		}
		subject := tasks[id].Subject
		if msg := gitHere(t, repo, "log", "-1", "--format=%B", branch); msg != subject+"\n\n"+want.summary {
			t.Errorf("%s's commit message is %q, want the subject and the summary", branch, msg)
		}
	}
	if files := gitHere(t, repo, "ls-tree", "-r", "--name-only", "taskd/l/1"); strings.Contains(files, "__pycache__") {
		t.Errorf("the branch holds a file the repository ignores:\n%s", files)
	}
	if _, err := os.Stat(file("1", "__pycache__/calc.cpython-312.pyc")); err != nil {
		t.Errorf("the agent's ignored file is not in its worktree (did the Write run?): %v", err)
	}
	ws3, _ := job.WorkspaceOf(tasks["3"])
	if ws3.Commit != "" || ws3.Base != start || gitHere(t, repo, "rev-parse", "taskd/l/3") != start {
		t.Errorf("the task that only read: %+v; want no commit", ws3)
	}
	if gitHere(t, repo, "rev-parse", "HEAD") != start || gitHere(t, repo, "status", "--porcelain") != "" {
		t.Errorf("the repository's own checkout changed:\n%s", gitHere(t, repo, "status", "--porcelain"))
	}

	out := mustCLI(t, "status", "--root", root)
	for _, want := range []string{"taskd/l/1 · 1 file changed", "taskd/l/2 · 1 file changed", "taskd/l/3 · no changes"} {
		if !strings.Contains(out, want) {
			t.Errorf("taskd status lacks %q:\n%s", want, out)
		}
	}
	var lists []status.List
	if err := json.Unmarshal([]byte(mustCLI(t, "status", "--root", root, "--json")), &lists); err != nil {
		t.Fatal(err)
	}
	for _, st := range lists[0].Tasks {
		if st.ID == "1" && (st.Worktree == nil || st.Worktree.Commit == "" || st.Worktree.FilesChanged != 1) {
			t.Errorf("status --json of task 1: worktree %+v", st.Worktree)
		}
	}
	diff := mustCLI(t, "diff", "--root", root, "l/1")
	for _, want := range []string{"-    return a - b", "+    return a + b", "# take it: git -C " + repo + " merge taskd/l/1", "# nothing uncommitted"} {
		if !strings.Contains(diff, want) {
			t.Errorf("taskd diff l/1 lacks %q:\n%s", want, diff)
		}
	}
	if stat := mustCLI(t, "diff", "--root", root, "--stat", "l/2"); !strings.Contains(stat, "notes.txt | 1 +") {
		t.Errorf("taskd diff --stat l/2:\n%s", stat)
	}
	// The CLI recorded the worktree as its session's working directory.
	sessions, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", "*.jsonl"))
	found := false
	for _, s := range sessions {
		data, _ := os.ReadFile(s)
		found = found || strings.Contains(string(data), fmt.Sprintf(`"cwd":%q`, place.Path("l", "1")))
	}
	if !found {
		t.Errorf("no Claude Code session of %v ran in task 1's worktree %s", sessions, place.Path("l", "1"))
	}
}

// gitHere runs git in dir as a person would and returns its output.
func gitHere(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
