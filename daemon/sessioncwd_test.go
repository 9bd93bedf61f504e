package daemon_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
)

// sessionHome makes a fresh home directory, sets HOME to it (the daemon
// and Claude Code share it, as on a person's machine) and returns it with
// the task root under it, $HOME/.claude/tasks, not made yet.
func sessionHome(t *testing.T) (home, root string) {
	home = t.TempDir()
	t.Setenv("HOME", home)
	if err := os.Mkdir(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	return home, filepath.Join(home, ".claude", "tasks")
}

// TestSessionTaskRunsInProject: a Claude Code session run by the real CLI
// in a project directory queues work for taskd with its own task tools:
// TaskCreate and then TaskUpdate to owner "taskd", and TaskCreate with a
// metadata.taskd; a file of the same shape is dropped into the session's
// list beside them. None names a cwd; each runs in the session's project
// directory, not in the home directory, and records it.
func TestSessionTaskRunsInProject(t *testing.T) {
	bin := claudestub.Binary(t)
	home, root := sessionHome(t)
	project := filepath.Join(home, "src", "my.app")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	// The agents taskd runs: claude, answering with Bash pwd, then text.
	agentStub := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		if strings.Contains(body, `"tool_result"`) {
			return claudestub.Turn{Text: "That is where I run."}
		}
		return claudestub.Turn{Bash: "pwd"}
	})
	h := startDaemonAt(t, root, nil, "", func(fc *config.FileConfig) {
		fc.Profiles = streamingClaude(t, bin, agentStub, config.ProfileSpec{})
		p := fc.Profiles["claude"]
		p.Command = append(p.Command, "--allowedTools", "Bash(pwd)")
		fc.Profiles["claude"] = p
	})

	// The session.
	sessionStub := claudestub.New(t, func(n int, _ string) claudestub.Turn {
		switch n {
		case 1:
			return claudestub.Turn{Tool: "TaskCreate", Input: map[string]any{"subject": "Say where you run", "description": "Run pwd.", "activeForm": "Saying where it runs"}}
		case 2:
			return claudestub.Turn{Tool: "TaskUpdate", Input: map[string]any{"taskId": "1", "owner": "taskd"}}
		case 3:
			return claudestub.Turn{Tool: "TaskCreate", Input: map[string]any{"subject": "pwd", "description": "print the directory", "activeForm": "Printing the directory",
				"metadata": map[string]any{"taskd": map[string]any{"agent": "exec", "prompt": "pwd"}}}}
		}
		return claudestub.Turn{Text: "Queued for taskd."}
	})
	cmd := exec.Command(bin, "-p", "queue it for taskd", "--output-format", "json", "--allowedTools", "TaskCreate,TaskUpdate")
	cmd.Dir = project
	cmd.Env = append(withEnv(sessionStub.Env(t), "HOME="+home), "PATH="+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	var res struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.SessionID == "" {
		t.Fatalf("no session id: %v\n%s", err, out)
	}
	list := res.SessionID
	// The shape the brief of this hand-off names, dropped beside them.
	h.drop(list, "3", `{"id": "3", "subject": "Say where you run", "description": "Run pwd.", "activeForm": "Saying where it runs", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": [], "metadata": {}}`)

	for _, id := range []string{"1", "2", "3"} {
		tf := h.waitState(list, id, task.Succeeded, 3*time.Minute)
		if cwd, _ := tf.Metadata.Object("taskd").String("cwd"); cwd != project {
			t.Errorf("task %s: metadata.taskd.cwd = %q, want the session's directory %s", id, cwd, project)
		}
		var c struct {
			Cwd string `json:"cwd"`
		}
		data, _ := os.ReadFile(filepath.Join(h.listDir(list), ".taskd", "runs", id, "1", "cmd.json"))
		if json.Unmarshal(data, &c); c.Cwd != project {
			t.Errorf("task %s ran in %q, want %s", id, c.Cwd, project)
		}
	}
	if out, _ := os.ReadFile(filepath.Join(h.listDir(list), ".taskd", "runs", "2", "1", "stdout.log")); string(out) != project+"\n" {
		t.Errorf("exec agent printed %q, want %q", out, project+"\n")
	}
	// Claude's Bash pwd answered with the project directory, twice.
	n := 0
	for _, b := range agentStub.Bodies() {
		if strings.Contains(b, `"tool_result"`) && strings.Contains(b, project) {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d of the claude agents' Bash pwd results name %s, want 2", n, project)
	}
}

// TestSessionTaskFallback: a list named like a session whose transcript
// cannot be used — a symbolic link, a FIFO, one past the bound, one that
// names a directory that does not exist — runs its task in the home
// directory at once, and says why in metadata.taskd.cwdNote.
func TestSessionTaskFallback(t *testing.T) {
	home, root := sessionHome(t)
	projects := filepath.Join(home, ".claude", "projects")
	lists := map[string]func(path string) error{
		"11111111-1111-4111-8111-111111111111": func(p string) error { return os.Symlink(filepath.Join(home, "elsewhere.jsonl"), p) },
		"22222222-2222-4222-8222-222222222222": func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"33333333-3333-4333-8333-333333333333": func(p string) error {
			return os.WriteFile(p, []byte(`{"type":"user","message":"`+strings.Repeat("x", 5<<20)+`","cwd":"`+home+`"}`+"\n"), 0o600)
		},
		"44444444-4444-4444-8444-444444444444": func(p string) error {
			return os.WriteFile(p, []byte(`{"type":"user","cwd":"`+filepath.Join(home, "gone")+`"}`+"\n"), 0o600)
		},
	}
	var ids []string
	for id, make := range lists {
		dir := filepath.Join(projects, "-src-"+id[:8])
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := make(filepath.Join(dir, id+".jsonl")); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	h := startDaemonAt(t, root, ids, "")
	for _, id := range ids {
		h.drop(id, "1", execTask("where", "pwd"))
	}
	for _, id := range ids {
		tf := h.waitState(id, "1", task.Succeeded, time.Minute)
		m := tf.Metadata.Object("taskd")
		if cwd, ok := m.String("cwd"); ok {
			t.Errorf("%s: cwd recorded as %q", id, cwd)
		}
		note, _ := m.String("cwdNote")
		if !strings.Contains(note, "runs in the home directory") || !strings.Contains(note, id) {
			t.Errorf("%s: cwdNote = %q", id, note)
		}
		if out, _ := os.ReadFile(filepath.Join(h.listDir(id), ".taskd", "runs", "1", "1", "stdout.log")); string(out) != h.cfg.Home+"\n" {
			t.Errorf("%s: ran in %q, want the home directory %s", id, out, h.cfg.Home)
		}
	}
}

// withEnv is env with the variables of set replacing those of the same
// names.
func withEnv(env []string, set ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, s := range set {
			if strings.HasPrefix(s, name+"=") {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}
