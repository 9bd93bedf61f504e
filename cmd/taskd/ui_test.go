package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
)

// claudeConfig is a daemon configuration whose claude profile runs the
// real Claude Code CLI, streaming, against stub.
func claudeConfig(t *testing.T, stub *claudestub.Server) string {
	t.Helper()
	bin := claudestub.Binary(t)
	cfg, _ := json.Marshal(map[string]any{"concurrency": 4, "scheduling": "normal", "profiles": map[string]any{
		"claude": map[string]any{"command": []string{bin, "-p", "--output-format", "stream-json", "--verbose"},
			"prompt": "stdin", "output": "claude-stream", "env": stub.Env(t), "timeout": "5m"}}})
	return string(cfg)
}

// toolResults counts the tool results a request carries: how far its
// session has got.
func toolResults(body string) int { return strings.Count(body, `"tool_result"`) }

// progressRow finds the progress the view shows under a running agent:
// its turn, its last tool and its cost.
var progressRow = regexp.MustCompile(`↳ turn (\d+) · (.+?) · [\d.]+k? tokens · ~?\$(\d+\.\d+)`)

// TestUI_LiveProgress: taskd ui, run in a real terminal against a live
// daemon whose agent is the real Claude Code CLI, shows the running
// agent's turn, last tool and cost change as the agent works (the stub
// holds each turn until the screen has shown the one before), its
// transcript growing in the detail, and the task succeeded at the end.
func TestUI_LiveProgress(t *testing.T) {
	holds := []chan struct{}{make(chan struct{}), make(chan struct{})}
	stub := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		switch toolResults(body) {
		case 0:
			return claudestub.Turn{Bash: "echo first-turn"}
		case 1:
			return claudestub.Turn{Hold: holds[0], Bash: "echo second-turn"}
		}
		return claudestub.Turn{Hold: holds[1], Text: `Both ran. {"success": true, "summary": "two turns"}`}
	})
	home := t.TempDir()
	root := liveDaemon(t, home, claudeConfig(t, stub))
	project := t.TempDir()
	writeTask(t, filepath.Join(root, "l", "1.json"), `{"id": "1", "subject": "Two turns", "status": "pending", "blocks": [], "blockedBy": [], "owner": "taskd",
	  "metadata": {"taskd": {"agent": "claude", "cwd": "`+project+`", "tools": ["Bash"], "prompt": "Run two commands."}}}`)

	tm := startTerm(t, 100, 30, []string{"HOME=" + home}, taskdBin(t), "ui", "--root", root)
	tm.waitFor("l · 1 task", time.Minute)
	tm.keys("j") // the task: its detail and transcript
	turn := func(n int) (tool string, cost float64) {
		t.Helper()
		s := tm.waitScreen(fmt.Sprintf("turn %d on the screen", n), 2*time.Minute, func(s string) bool {
			m := progressRow.FindStringSubmatch(s)
			return m != nil && m[1] == strconv.Itoa(n)
		})
		m := progressRow.FindStringSubmatch(s)
		cost, _ = strconv.ParseFloat(m[3], 64)
		return m[2], cost
	}
	tool1, cost1 := turn(1)
	if tool1 != "Bash echo first-turn" || cost1 <= 0 {
		t.Errorf("turn 1 shows tool %q, cost %v", tool1, cost1)
	}
	tm.waitFor("tool: Bash echo first-turn", time.Minute) // the transcript
	close(holds[0])
	tool2, cost2 := turn(2)
	if tool2 != "Bash echo second-turn" || cost2 <= cost1 {
		t.Errorf("turn 2 shows tool %q, cost %v (turn 1: %v)", tool2, cost2, cost1)
	}
	s := tm.waitFor("tool: Bash echo second-turn", time.Minute)
	if !strings.Contains(s, "1 running") || !regexp.MustCompile(`today claude \$0\.\d*[1-9]`).MatchString(s) {
		t.Errorf("the totals do not count the running agent and its cost:\n%s", s)
	}
	close(holds[1])
	tm.waitScreen("the task to succeed", 2*time.Minute, func(s string) bool {
		return regexp.MustCompile(`1\s+succeeded`).MatchString(s)
	})
}

// TestUI_AnswerFromView: a child task whose agent (the real Claude Code
// CLI) was refused a command needs a person; taskd ui marks it and its
// parent, and answering it from the view — allow, with a note typed in
// place — lets the command run: the next attempt continues the session
// with the note in its prompt, and the task and its parent succeed.
func TestUI_AnswerFromView(t *testing.T) {
	project := t.TempDir()
	made := filepath.Join(project, "made.txt")
	stub := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		last := body[max(strings.LastIndex(body, `"role":"user"`), 0):]
		switch {
		case strings.Contains(last, "A person has allowed the tool calls you were refused"):
			return claudestub.Turn{Bash: "touch " + made}
		case toolResults(last) > 0 && fileExists(made):
			return claudestub.Turn{Text: `Made it. {"success": true, "summary": "made the file"}`}
		case toolResults(last) > 0:
			return claudestub.Turn{Text: "The command was refused."}
		}
		return claudestub.Turn{Bash: "touch " + made}
	})
	home := t.TempDir()
	root := liveDaemon(t, home, claudeConfig(t, stub))
	parent, _ := json.Marshal(map[string]any{"id": "1", "subject": "Parent", "status": "pending", "blocks": []string{}, "blockedBy": []string{}, "owner": "taskd",
		"metadata": map[string]any{"taskd": map[string]any{"agent": "exec", "cwd": project,
			"prompt": "/push name=maker agent=claude \"WORK: make the file.\"\n/run\n\ntaskd child receive --timeout 300s\n"}}})
	writeTask(t, filepath.Join(root, "l", "1.json"), string(parent))

	tm := startTerm(t, 100, 30, []string{"HOME=" + home}, taskdBin(t), "ui", "--root", root)
	s := tm.waitScreen("the child to need a person", 3*time.Minute, func(s string) bool { return strings.Contains(s, "needs_human") })
	marked := regexp.MustCompile(`(?m)^ (.)\s+(\S*\s*)(\d+)\s+(\S+)`)
	marks := map[string]string{}
	for _, m := range marked.FindAllStringSubmatch(s, -1) {
		marks[m[3]] = m[1] + " " + m[4]
	}
	child := ""
	for id, m := range marks {
		if strings.HasSuffix(m, "needs_human") {
			child = id
		}
	}
	if marks["1"] != "! running" || child == "" || marks[child] != "! needs_human" {
		t.Errorf("the marks: %q; want ! on the parent (1, running) and on the child that needs a person; the screen:\n%s", marks, s)
	}
	if !regexp.MustCompile(`(?m)^[ >]! ▾ l · `).MatchString(s) {
		t.Errorf("the list is not marked:\n%s", s)
	}
	tm.keys("n") // the task that needs a person
	tm.waitFor("answers: allow", time.Minute)
	tm.keys("a")
	tm.waitFor("answer: [allow]", 30*time.Second)
	note := "NOTE-FROM-VIEW: the file may be empty."
	tm.text(note)
	tm.waitFor("note: "+note, 30*time.Second)
	tm.keys("Enter")
	tm.waitFor("l/"+child+" answered allow", 30*time.Second)

	waitUntil(t, "the child to succeed", 3*time.Minute, func() bool { return stateIn(t, root, "l", child) == task.Succeeded })
	next := filepath.Join(root, "l", ".taskd", "runs", child, "2", "prompt.md")
	if p, err := os.ReadFile(next); err != nil || !strings.Contains(string(p), note) {
		t.Errorf("the next attempt's prompt.md (%v) lacks the note:\n%s", err, p)
	}
	if !fileExists(made) {
		t.Errorf("the allowed command did not run")
	}
	waitUntil(t, "the parent to succeed", 3*time.Minute, func() bool { return stateIn(t, root, "l", "1") == task.Succeeded })
	tm.waitScreen("the marks to go", time.Minute, func(s string) bool { return !strings.Contains(s, "!") })
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestUI_CancelStopsTheAgent: cancelling a running task from taskd ui
// (c, then y) stops its agent, the real Claude Code CLI running a
// command: every process of its tree — the CLI, the shell its Bash tool
// started and that shell's child — is gone, and the task is cancelled.
func TestUI_CancelStopsTheAgent(t *testing.T) {
	project := t.TempDir()
	pids := filepath.Join(project, "pids")
	stub := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		if toolResults(body) == 0 {
			return claudestub.Turn{Bash: "echo $$ >> " + pids + "; sleep 300 & echo $! >> " + pids + "; wait"}
		}
		return claudestub.Turn{Text: `{"success": true, "summary": "slept"}`}
	})
	home := t.TempDir()
	root := liveDaemon(t, home, claudeConfig(t, stub))
	writeTask(t, filepath.Join(root, "l", "1.json"), `{"id": "1", "subject": "Sleep a long time", "status": "pending", "blocks": [], "blockedBy": [], "owner": "taskd",
	  "metadata": {"taskd": {"agent": "claude", "cwd": "`+project+`", "tools": ["Bash"], "prompt": "Sleep."}}}`)

	var tree []int
	waitUntil(t, "the agent's command to run", 3*time.Minute, func() bool {
		data, _ := os.ReadFile(pids)
		tree = nil
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				tree = append(tree, n)
			}
		}
		return len(tree) == 2
	})
	var cmd struct {
		PID int `json:"pid"`
	}
	data, _ := os.ReadFile(filepath.Join(root, "l", ".taskd", "runs", "1", "1", "cmd.json"))
	if json.Unmarshal(data, &cmd) != nil || cmd.PID <= 0 {
		t.Fatalf("cmd.json records no process: %s", data)
	}
	tree = append(tree, cmd.PID)
	for _, pid := range tree {
		if !alive(pid) {
			t.Fatalf("process %d of the agent is not running before the cancel", pid)
		}
	}

	tm := startTerm(t, 80, 24, []string{"HOME=" + home}, taskdBin(t), "ui", "--root", root)
	tm.waitFor("running", time.Minute)
	tm.keys("j", "c")
	tm.waitFor("Cancel l/1? A running agent is stopped. [y/N]", 30*time.Second)
	tm.keys("y")
	tm.waitFor("l/1 cancel requested", 30*time.Second)
	waitUntil(t, "the agent's processes to end", time.Minute, func() bool {
		for _, pid := range tree {
			if alive(pid) {
				return false
			}
		}
		return true
	})
	waitUntil(t, "the task to be cancelled", time.Minute, func() bool { return stateIn(t, root, "l", "1") == task.Cancelled })
	tm.waitFor("cancelled", time.Minute)
}

// alive reports whether process pid runs (a zombie does not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: the signal said it is there
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// sgrColour matches an escape sequence that sets a colour (not one that
// sets the default colours back, 39 and 49).
var sgrColour = regexp.MustCompile(`\x1b\[(?:[0-9]*;)*(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])(?:;[0-9]*)*m`)

// TestUI_Terminal: in an 80×24 terminal with NO_COLOR, taskd ui draws
// every line within 80 columns with no colour, marks what needs a
// person with ! and the cursor with >, shows the help on ?, follows a
// resize to a wide terminal (the detail beside the tree), and quits on q,
// and in another run on Ctrl-C, leaving the terminal as it was: the
// alternate screen left, the cursor shown, the line discipline back (the
// shell after it reads a line, echoed). Without NO_COLOR it paints.
func TestUI_Terminal(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(home, ".claude", "tasks")
	writeTask(t, filepath.Join(root, "l", "1.json"), `{"id": "1", "subject": "Parent", "status": "in_progress", "blocks": [], "blockedBy": [], "owner": "taskd",
	  "metadata": {"taskd": {"state": "waiting", "attempt": 1}}}`)
	writeTask(t, filepath.Join(root, "l", "2.json"), `{"id": "2", "subject": "Child `+strings.Repeat("with a long subject ", 6)+`", "status": "pending", "blocks": [], "blockedBy": [], "owner": "taskd",
	  "metadata": {"taskd": {"parent": "1", "state": "needs_human", "attempt": 1, "hitl": {"reason": "Human review", "options": ["passed", "failed", "leave"]}}}}`)
	for _, quit := range []string{"q", "C-c"} {
		t.Run(quit, func(t *testing.T) {
			tm := startTerm(t, 80, 24, []string{"HOME=" + home, "NO_COLOR=1"}, taskdBin(t), "ui", "--root", root)
			s := tm.waitFor("needs_human", time.Minute)
			if tm.format("#{alternate_on}") != "1" {
				t.Errorf("taskd ui does not use the alternate screen")
			}
			for i, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
				if n := len([]rune(line)); n > 80 {
					t.Errorf("line %d is %d columns: %q", i+1, n, line)
				}
			}
			if p := tm.painted(); sgrColour.MatchString(p) {
				t.Errorf("colour with NO_COLOR:\n%q", p)
			}
			if !regexp.MustCompile(`(?m)^ ! 1 +waiting`).MatchString(s) || !regexp.MustCompile(`(?m)^ ! └ 2 +needs_human`).MatchString(s) {
				t.Errorf("the marks are not on the screen:\n%s", s)
			}
			tm.keys("j")
			tm.waitScreen("the cursor on task 1", 30*time.Second, func(s string) bool { return regexp.MustCompile(`(?m)^>! 1 +waiting`).MatchString(s) })
			tm.keys("?")
			tm.waitFor("any key closes the help", 30*time.Second)
			tm.keys("Escape")
			tm.waitFor("Parent", 30*time.Second)
			tm.must("resize-window", "-t", "ui", "-x", "160", "-y", "40")
			tm.waitScreen("the wide layout", 30*time.Second, func(s string) bool { return strings.Contains(s, "│── l/1 · waiting") })
			tm.keys(quit)
			after := tm.waitFor("exited 0", 30*time.Second)
			if tm.format("#{alternate_on}") != "0" || tm.format("#{cursor_flag}") != "1" {
				t.Errorf("after %s: alternate screen %s, cursor shown %s", quit, tm.format("#{alternate_on}"), tm.format("#{cursor_flag}"))
			}
			settings := map[string]bool{}
			for _, f := range strings.Fields(after) {
				settings[strings.TrimSuffix(f, ";")] = true
			}
			for _, mode := range []string{"icanon", "echo", "icrnl", "opost", "isig"} {
				if !settings[mode] || settings["-"+mode] {
					t.Errorf("after %s the terminal is not restored: %s is not set in stty -a:\n%s", quit, mode, after)
				}
			}
		})
	}
	tm := startTerm(t, 80, 24, []string{"HOME=" + home}, taskdBin(t), "ui", "--root", root)
	tm.waitFor("needs_human", time.Minute)
	if p := tm.painted(); !sgrColour.MatchString(p) {
		t.Errorf("no colour without NO_COLOR:\n%q", p)
	}
}

// TestUI_DiffAndOutputInPager: from taskd ui, d shows the diff of a task
// that ran in a git worktree (taskd diff's) and o its whole output, each
// in $PAGER, and the view comes back when the pager ends.
func TestUI_DiffAndOutputInPager(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	repo := t.TempDir()
	writeTask(t, filepath.Join(repo, "notes.txt"), "first\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first"}} {
		gitHere(t, repo, args...)
	}
	home := t.TempDir()
	root := liveDaemon(t, home, `{"concurrency": 2}`)
	writeTask(t, filepath.Join(root, "l", "1.json"), `{"id": "1", "subject": "Change the notes", "status": "pending", "blocks": [], "blockedBy": [], "owner": "taskd",
	  "metadata": {"taskd": {"agent": "exec", "cwd": "`+repo+`", "worktree": true, "prompt": "echo changed > notes.txt; echo OUTPUT-OF-THE-TASK"}}}`)
	waitUntil(t, "the task to succeed", 2*time.Minute, func() bool { return stateIn(t, root, "l", "1") == task.Succeeded })

	paged := filepath.Join(t.TempDir(), "paged")
	tm := startTerm(t, 100, 30, []string{"HOME=" + home, "PAGER=cat > " + paged}, taskdBin(t), "ui", "--root", root)
	tm.waitFor("succeeded", time.Minute)
	tm.keys("j")
	tm.waitFor("branch: taskd/l/1 of "+repo, 30*time.Second)
	tm.keys("d")
	waitUntil(t, "the diff in the pager", time.Minute, func() bool {
		data, _ := os.ReadFile(paged)
		return strings.Contains(string(data), "# l/1 · branch taskd/l/1 of "+repo) && strings.Contains(string(data), "+changed")
	})
	tm.waitFor("l/1 · succeeded", 30*time.Second) // the view is back
	tm.keys("o")
	waitUntil(t, "the output in the pager", time.Minute, func() bool {
		data, _ := os.ReadFile(paged)
		return string(data) == "OUTPUT-OF-THE-TASK\n"
	})
	tm.waitFor("l/1 · succeeded", 30*time.Second)
}
