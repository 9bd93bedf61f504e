package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/handoff"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
	"github.com/taskd/taskd/taskfile"
)

// taskdOnPath puts a taskd on a new directory of PATH that runs this test
// binary as taskd (TestMain), and returns that PATH.
func taskdOnPath(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := "#!/bin/sh\nTASKD_TEST_MAIN=1 exec '" + exe + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "taskd"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir + string(os.PathListSeparator) + os.Getenv("PATH")
}

// TestClaudeInstall_Handoff: 'taskd claude install' writes the skill; a
// session of the real Claude Code CLI, run in a project directory and
// asked to hand work to taskd, finds the skill, reads it, and runs the
// taskd submit it describes; the task records the project directory, the
// permission mode and the tools, and the daemon's agent runs there.
func TestClaudeInstall_Handoff(t *testing.T) {
	isolate(t)
	bin := claudestub.Binary(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("TASKD_ROOT", "")
	t.Setenv("TASKD_LIST", "")
	skill := filepath.Join(home, ".claude", "skills", "taskd", "SKILL.md")

	out, errOut, code := runCLI(t, "claude", "install", "--dry-run")
	if _, err := os.Stat(skill); code != 0 || !os.IsNotExist(err) || !strings.Contains(out, "would write ~/.claude/skills/taskd/SKILL.md:") || !strings.Contains(out, handoff.Skill) {
		t.Fatalf("install --dry-run: exit %d, %q; the file: %v\n%s", code, errOut, err, out)
	}
	out, errOut, code = runCLI(t, "claude", "install")
	if data, err := os.ReadFile(skill); code != 0 || err != nil || string(data) != handoff.Skill || !strings.HasPrefix(out, "wrote ~/.claude/skills/taskd/SKILL.md\n") {
		t.Fatalf("install: exit %d, %q, %v\n%s", code, errOut, err, out)
	}
	if out, _, _ = runCLI(t, "claude", "install"); !strings.Contains(out, "up to date") {
		t.Errorf("install again: %q, want up to date", out)
	}

	root := filepath.Join(home, ".claude", "tasks")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(home, "src", "app")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	// The daemon's agent: it says where it runs.
	agentStub := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		return claudestub.Turn{Text: `Done. {"success": true, "summary": "fixed it"}`}
	})
	startTestDaemon(t, root, &config.FileConfig{Profiles: map[string]config.ProfileSpec{"claude": {
		Command: []string{bin, "-p", "--output-format", "stream-json", "--verbose"}, Prompt: "stdin", Output: "claude-stream",
		Env: agentStub.Env(t), Timeout: "2m",
	}}})

	// The session: asked to hand work off, it uses the skill, then does
	// what the skill says.
	submit := `taskd submit --subject 'Fix the flaky login test' --permission-mode acceptEdits --tools 'Bash(go test:*)' 'The login test in login_test.go sleeps 2s; wait for the ready event instead, run go test ./..., report.'`
	var listed, read bool
	sessionStub := claudestub.New(t, func(n int, body string) claudestub.Turn {
		switch n {
		case 1:
			listed = strings.Contains(body, "- taskd: Queue work for taskd")
			return claudestub.Turn{Tool: "Skill", Input: map[string]any{"skill": "taskd", "args": "fix the flaky login test"}}
		case 2:
			read = strings.Contains(body, "Queue this work for taskd: fix the flaky login test") && strings.Contains(body, "taskd submit from the project")
			return claudestub.Turn{Bash: submit}
		}
		return claudestub.Turn{Text: "Queued."}
	})
	cmd := exec.Command(bin, "-p", "hand the flaky login test to taskd", "--output-format", "json", "--allowedTools", "Skill(taskd)")
	cmd.Dir = project
	cmd.Env = append(sessionStub.Env(t), "HOME="+home, "PATH="+taskdOnPath(t))
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	if !listed || !read {
		t.Fatalf("the session did not list the skill (%v) or was not given it (%v)", listed, read)
	}
	bodies := sessionStub.Bodies()
	if len(bodies) < 3 || !strings.Contains(bodies[2], "tasks/default/1.json") {
		t.Fatalf("the session's taskd submit did not print the task's path; its last request:\n%s", bodies[len(bodies)-1])
	}

	file := filepath.Join(root, "default", "1.json")
	var tf *taskfile.Task
	waitUntil(t, "the handed-off task to succeed", 3*time.Minute, func() bool {
		tf, _ = taskfile.ReadFile(file)
		return tf != nil && task.Of(tf) == task.Succeeded
	})
	m := tf.Metadata.Object("taskd")
	cwd, _ := m.String("cwd")
	mode, _ := m.String("permissionMode")
	if tools := task.Strings(m, "tools"); cwd != project || mode != "acceptEdits" || len(tools) != 1 || tools[0] != "Bash(go test:*)" || tf.Subject != "Fix the flaky login test" {
		t.Errorf("task: subject %q, cwd %q, permissionMode %q, tools %q", tf.Subject, cwd, mode, tools)
	}
	var c struct {
		Cwd  string   `json:"cwd"`
		Argv []string `json:"argv"`
	}
	data, _ := os.ReadFile(filepath.Join(root, "default", ".taskd", "runs", "1", "1", "cmd.json"))
	if json.Unmarshal(data, &c); c.Cwd != project || !strings.Contains(strings.Join(c.Argv, " "), "--permission-mode acceptEdits") {
		t.Errorf("the agent ran in %q with %q", c.Cwd, c.Argv)
	}

	out, errOut, code = runCLI(t, "claude", "uninstall")
	if _, err := os.Stat(skill); code != 0 || !os.IsNotExist(err) || !strings.Contains(out, "removed") {
		t.Errorf("uninstall: exit %d, %q %q; the file: %v", code, out, errOut, err)
	}
}

// TestClaudeInstall_Refuses: install leaves a skill file taskd did not
// write (unless --force) and never writes through a link; --project
// writes under the current directory; a bad verb is a usage error.
func TestClaudeInstall_Refuses(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	skill := filepath.Join(home, ".claude", "skills", "taskd", "SKILL.md")
	os.MkdirAll(filepath.Dir(skill), 0o755)

	os.WriteFile(skill, []byte("my own skill\n"), 0o644)
	if _, errOut, code := runCLI(t, "claude", "install"); code != 1 || !strings.Contains(errOut, "did not write") {
		t.Errorf("install over another's file: exit %d, %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, "claude", "uninstall"); code != 1 || !strings.Contains(errOut, "did not write") {
		t.Errorf("uninstall of another's file: exit %d, %q", code, errOut)
	}
	if data, _ := os.ReadFile(skill); string(data) != "my own skill\n" {
		t.Fatalf("the file was changed: %q", data)
	}
	if out, errOut, code := runCLI(t, "claude", "install", "--force"); code != 0 || !strings.Contains(out, "replaced") {
		t.Errorf("install --force: exit %d, %q %q", code, out, errOut)
	}

	target := filepath.Join(t.TempDir(), "elsewhere.md")
	os.WriteFile(target, []byte("dotfiles\n"), 0o644)
	os.Remove(skill)
	os.Symlink(target, skill)
	for _, args := range [][]string{{"claude", "install"}, {"claude", "install", "--force"}, {"claude", "uninstall"}} {
		if _, errOut, code := runCLI(t, args...); code != 1 || !strings.Contains(errOut, "symbolic link") {
			t.Errorf("%v over a link: exit %d, %q", args, code, errOut)
		}
	}
	if data, _ := os.ReadFile(target); string(data) != "dotfiles\n" {
		t.Errorf("written through the link: %q", data)
	}

	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(home, "cfg"))
	if out, _, code := runCLI(t, "claude", "install"); code != 0 || !strings.Contains(out, "~/cfg/skills/taskd/SKILL.md") {
		t.Errorf("install with CLAUDE_CONFIG_DIR: exit %d, %q", code, out)
	}
	proj := t.TempDir()
	t.Chdir(proj)
	if out, _, code := runCLI(t, "claude", "install", "--project"); code != 0 || !strings.Contains(out, filepath.Join(proj, ".claude", "skills", "taskd", "SKILL.md")) {
		t.Errorf("install --project: exit %d, %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(proj, ".claude", "skills", "taskd", "SKILL.md")); err != nil {
		t.Error(err)
	}
	for _, args := range [][]string{{"claude"}, {"claude", "frobnicate"}, {"claude", "install", "extra"}} {
		if _, _, code := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
