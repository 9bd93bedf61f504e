package main

import (
	"fmt"
	"github.com/taskd/taskd/internal/waitfor"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// This file holds what the tests of taskd ui run it with: the taskd
// binary, built as a user builds it, in a real terminal (a tmux server of
// the test's own, on a private socket), and a real daemon on a root of the
// test's own.

var builtTaskd struct {
	once sync.Once
	bin  string
	err  error
}

// taskdBin builds taskd once for the tests that run it as a user does.
func taskdBin(t *testing.T) string {
	t.Helper()
	builtTaskd.once.Do(func() {
		dir, err := os.MkdirTemp("", "taskd-ui-bin-")
		if err != nil {
			builtTaskd.err = err
			return
		}
		builtTaskd.bin = filepath.Join(dir, "taskd")
		if out, err := exec.Command("go", "build", "-o", builtTaskd.bin, ".").CombinedOutput(); err != nil {
			builtTaskd.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if builtTaskd.err != nil {
		t.Fatal(builtTaskd.err)
	}
	return builtTaskd.bin
}

// A term is a terminal of its own (a tmux server on a private socket)
// running one command.
type term struct {
	t   *testing.T
	env []string // of the tmux commands: their private socket directory
}

var terms atomic.Int64

// startTerm runs argv with env (and nothing else of the test's
// environment but PATH and the terminal's TERM) in a w×h terminal. When
// the command exits, the terminal shows the terminal's settings (stty -a)
// and then "exited N" (so that a wait for it sees both), and stays.
func startTerm(t *testing.T, w, h int, env []string, argv ...string) *term {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("TASKD_REQUIRE_TOOLS") == "1" {
			t.Fatalf("tmux is not installed, and TASKD_REQUIRE_TOOLS=1")
		}
		t.Skip("skipping: tmux is not installed")
	}
	dir, err := os.MkdirTemp("", "tmux-")
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, env: append(os.Environ(), "TMUX_TMPDIR="+dir, "TMUX=")}
	var script strings.Builder
	script.WriteString("env -i TERM=\"$TERM\" PATH=" + shellQuote(os.Getenv("PATH")) + " LANG=C.UTF-8")
	for _, kv := range env {
		script.WriteString(" " + shellQuote(kv))
	}
	for _, a := range argv {
		script.WriteString(" " + shellQuote(a))
	}
	script.WriteString("\nrc=$?\nstty -a\necho \"exited $rc\"\nexec sleep 3600\n")
	file := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(file, []byte(script.String()), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		tm.tmux("kill-server")
		os.RemoveAll(dir)
	})
	tm.must("-f", "/dev/null", "new-session", "-d", "-s", "ui", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "sh "+shellQuote(file))
	return tm
}

func (tm *term) tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-L", "ui"}, args...)...)
	cmd.Env = tm.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (tm *term) must(args ...string) string {
	tm.t.Helper()
	out, err := tm.tmux(args...)
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// screen is what the terminal shows, as text.
func (tm *term) screen() string {
	tm.t.Helper()
	return tm.must("capture-pane", "-p", "-t", "ui")
}

// painted is what the terminal shows, with its colours and attributes as
// escape sequences.
func (tm *term) painted() string {
	tm.t.Helper()
	return tm.must("capture-pane", "-p", "-e", "-t", "ui")
}

// keys types keys, as tmux names them (Enter, C-c, Up), each sent alone.
func (tm *term) keys(keys ...string) {
	tm.t.Helper()
	for _, k := range keys {
		tm.must("send-keys", "-t", "ui", k)
	}
}

// text types text as it is.
func (tm *term) text(s string) {
	tm.t.Helper()
	tm.must("send-keys", "-t", "ui", "-l", s)
}

// format asks tmux about the pane (display-message -p).
func (tm *term) format(f string) string {
	tm.t.Helper()
	return strings.TrimSpace(tm.must("display-message", "-p", "-t", "ui", f))
}

// waitScreen waits until the screen satisfies ok and returns it; after
// timeout the test fails, showing the screen.
func (tm *term) waitScreen(what string, timeout time.Duration, ok func(string) bool) string {
	tm.t.Helper()
	var s string
	if !waitfor.Within(timeout, func() bool { s = tm.screen(); return ok(s) }) {
		tm.t.Fatalf("timed out after %v waiting for %s; the screen:\n%s", timeout, what, s)
	}
	return s
}

// waitFor waits until the screen shows text.
func (tm *term) waitFor(text string, timeout time.Duration) string {
	tm.t.Helper()
	return tm.waitScreen(fmt.Sprintf("%q on the screen", text), timeout, func(s string) bool { return strings.Contains(s, text) })
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// liveDaemon runs the built taskd as a daemon whose home is home (root
// ~/.claude/tasks, configuration ~/.config/taskd/config.json with cfg),
// until the test ends; it returns the root.
func liveDaemon(t *testing.T, home, cfg string) string {
	t.Helper()
	writeTask(t, filepath.Join(home, ".config", "taskd", "config.json"), cfg)
	root := filepath.Join(home, ".claude", "tasks")
	var logs lockedBuffer
	env := []string{"HOME=" + home}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "HOME" && (!strings.HasPrefix(name, "XDG_") || name == "XDG_RUNTIME_DIR") && !strings.HasPrefix(name, "TASKD_") && !strings.HasPrefix(name, "CLAUDE_") && !strings.HasPrefix(name, "ANTHROPIC_") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(taskdBin(t), "run")
	cmd.Env, cmd.Stderr = env, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if t.Failed() {
			t.Logf("the daemon's log:\n%s", logs.String())
		}
	})
	waitUntil(t, "the daemon to start", time.Minute, func() bool { return strings.Contains(logs.String(), "taskd started") })
	return root
}
