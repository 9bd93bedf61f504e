package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofrs/flock"
	"github.com/taskd/taskd/install"
	"github.com/taskd/taskd/internal/proc"
)

// doctorSetup is one machine for taskd doctor: a root with a list, a
// directory of programs for PATH, a configuration directory, a service
// and a daemon, all healthy until a test case spoils one of them.
type doctorSetup struct {
	t               *testing.T
	dir             string // everything lives under it
	root, list, bin string
	configHome      string // $XDG_CONFIG_HOME
	env             map[string]string
	configFlag      string
	lists           []string
	service         install.Status
	serviceErr      error
	daemonPath      string // the PATH of the running daemon; empty: unknown
	supervision     proc.Mode
	lock            *flock.Flock
}

func newDoctorSetup(t *testing.T) *doctorSetup {
	dir := t.TempDir()
	s := &doctorSetup{
		t: t, dir: dir,
		root: filepath.Join(dir, "tasks"), bin: filepath.Join(dir, "bin"), configHome: filepath.Join(dir, "config"),
		service: install.Status{File: "/home/alice/.config/systemd/user/taskd.service", Installed: true, Running: true,
			Logs: "journalctl --user -u taskd"},
		supervision: proc.ByCgroup,
	}
	s.list = filepath.Join(s.root, "demo")
	s.env = map[string]string{"TASKD_ROOT": s.root, "HOME": filepath.Join(dir, "home"), "PATH": s.bin}
	for _, d := range []string{s.list, s.bin, s.configHome} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(s.root, 0o700)
	for _, prog := range []string{"claude", "opencode", "codex", "sh"} {
		s.program(prog)
	}
	writeTask(t, filepath.Join(s.list, "1.json"), `{"subject": "Say hello", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "echo hello"}}}`)
	s.holdLock("4242")
	t.Setenv("XDG_CONFIG_HOME", s.configHome)
	return s
}

// program puts an executable called name in the PATH directory.
func (s *doctorSetup) program(name string) {
	if err := os.WriteFile(filepath.Join(s.bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
		s.t.Fatal(err)
	}
}

// holdLock takes the root's daemon lock as a daemon does, recording pid.
func (s *doctorSetup) holdLock(pid string) {
	path := filepath.Join(s.root, ".taskd.lock")
	s.lock = flock.New(path)
	if ok, err := s.lock.TryLock(); !ok || err != nil {
		s.t.Fatalf("lock %s: %v, %v", path, ok, err)
	}
	s.t.Cleanup(func() { s.lock.Unlock() })
	if err := os.WriteFile(path, []byte(pid+"\n"), 0o600); err != nil {
		s.t.Fatal(err)
	}
}

func (s *doctorSetup) write(path, data string) {
	s.t.Helper()
	writeTask(s.t, path, data)
}

// run runs the checks and returns the report and the exit status.
func (s *doctorSetup) run() (string, []check, int) {
	d := &doctor{
		rootFlag: "", configFlag: s.configFlag, lists: s.lists,
		getenv: func(k string) string { return s.env[k] },
		service: func(context.Context) (install.Status, error) {
			return s.service, s.serviceErr
		},
		daemonEnv: func(pid int) (string, string, bool) {
			return s.daemonPath, "", s.daemonPath != ""
		},
		supervision: func(pid int) (proc.Mode, string) {
			if s.supervision == proc.ByCgroup {
				return s.supervision, "each attempt in a cgroup of its own under /sys/fs/cgroup/user.slice/taskd.service/taskd"
			}
			return s.supervision, "the daemon's cgroup /user.slice/session-2.scope holds no cgroups of its own (not writable to it)"
		},
	}
	d.run(context.Background())
	var out bytes.Buffer
	err := d.report(&out)
	return out.String(), d.checks, exitCode(err, &out)
}

var doctorTests = []struct {
	name  string
	setup func(s *doctorSetup)
	what  string // the check that must have the level
	level string
	text  string // in its detail
	code  int
	quiet string // a check that must not complain, if any
}{
	// Failures.
	{"root writable by others", func(s *doctorSetup) { os.Chmod(s.root, 0o777) }, "root", levelFail, "can be written by other users (mode 0777)", 1, ""},
	{"root is a file", func(s *doctorSetup) {
		s.env["TASKD_ROOT"] = filepath.Join(s.dir, "file")
		s.write(s.env["TASKD_ROOT"], "x")
	}, "root", levelFail, "is not a directory", 1, ""},
	{"no root", func(s *doctorSetup) { delete(s.env, "TASKD_ROOT"); delete(s.env, "HOME") }, "root", levelFail, "no task root", 1, ""},
	{"worktrees under ~/.claude", func(s *doctorSetup) { s.env["XDG_STATE_HOME"] = filepath.Join(s.env["HOME"], ".claude", "state") },
		"worktrees", levelFail, "where Claude Code refuses every edit", 1, ""},
	{"worktrees under $CLAUDE_CONFIG_DIR", func(s *doctorSetup) {
		s.env["CLAUDE_CONFIG_DIR"] = filepath.Join(s.dir, "claude")
		s.env["XDG_STATE_HOME"] = filepath.Join(s.dir, "claude", "state")
	}, "worktrees", levelFail, "where Claude Code refuses every edit", 1, ""},
	{"worktrees dir a link", func(s *doctorSetup) {
		s.env["XDG_STATE_HOME"] = filepath.Join(s.dir, "state")
		os.MkdirAll(filepath.Join(s.dir, "state", "taskd"), 0o700)
		os.Symlink(s.dir, filepath.Join(s.dir, "state", "taskd", "worktrees"))
	}, "worktrees", levelFail, "not a directory (a link", 1, ""},
	{"list writable by its group", func(s *doctorSetup) { os.Chmod(s.list, 0o770) }, "list demo", levelFail, "(mode 0770)", 1, ""},
	{"named list missing", func(s *doctorSetup) { s.lists = []string{"nope"} }, "list nope", levelFail, "no list", 1, ""},
	{"list of another user (needs root)", func(s *doctorSetup) { os.Chown(s.list, 65534, 65534) }, "list demo", levelFail, "owned by another user (uid 65534", 1, ""},
	{"root of another user (needs root)", func(s *doctorSetup) { os.Chown(s.root, 65534, 65534) }, "root", levelFail, "owned by another user (uid 65534", 1, ""},
	{"list's .taskd is a link", func(s *doctorSetup) {
		os.Symlink(s.dir, filepath.Join(s.list, ".taskd"))
	}, "list demo", levelFail, ".taskd is a symbolic link", 1, ""},
	{"list's run folders are a link", func(s *doctorSetup) {
		os.Mkdir(filepath.Join(s.list, ".taskd"), 0o700)
		os.Symlink(s.dir, filepath.Join(s.list, ".taskd", "runs"))
	}, "list demo", levelFail, "runs is a symbolic link", 1, ""},
	{"config does not parse", func(s *doctorSetup) {
		s.write(filepath.Join(s.configHome, "taskd", "config.json"), `{"defaultAgent": "exec",`)
	}, "config", levelFail, "config.json", 1, ""},
	{"config has an unknown field", func(s *doctorSetup) {
		s.write(filepath.Join(s.configHome, "taskd", "config.json"), `{"defaultAgnet": "exec"}`)
	}, "config", levelFail, `unknown field "defaultAgnet"`, 1, ""},
	{"config names an unknown profile", func(s *doctorSetup) {
		s.write(filepath.Join(s.configHome, "taskd", "config.json"), `{"agents": {"Developer": "fast"}}`)
	}, "config", levelFail, `unknown profile "fast"`, 1, ""},
	{"--config missing", func(s *doctorSetup) { s.configFlag = filepath.Join(s.dir, "missing.json") }, "config", levelFail, "no such file", 1, ""},
	{"configured profile's program missing", func(s *doctorSetup) {
		s.write(filepath.Join(s.configHome, "taskd", "config.json"), `{"profiles": {"fast": {"command": ["fastagent", "-p"]}}}`)
	}, "profile fast", levelFail, "fastagent is not on this shell's PATH", 1, ""},
	{"default agent's program missing", func(s *doctorSetup) {
		os.Remove(filepath.Join(s.bin, "codex"))
		s.write(filepath.Join(s.configHome, "taskd", "config.json"), `{"defaultAgent": "codex"}`)
	}, "profile codex", levelFail, "codex is not on", 1, ""},
	{"program missing from the daemon's PATH", func(s *doctorSetup) {
		s.daemonPath = filepath.Join(s.dir, "elsewhere")
		s.write(filepath.Join(s.configHome, "taskd", "config.json"), `{"agents": {"Developer": "claude"}}`)
	}, "profile claude", levelFail, "claude is not on the PATH of the daemon (pid 4242)", 1, ""},
	{"program given by a path that does not exist", func(s *doctorSetup) {
		s.write(filepath.Join(s.configHome, "taskd", "config.json"), `{"profiles": {"claude": {"command": ["/opt/nowhere/claude"]}}}`)
	}, "profile claude", levelFail, "/opt/nowhere/claude does not exist", 1, ""},
	{"user workflow with errors", func(s *doctorSetup) {
		s.write(filepath.Join(s.configHome, "taskd", "workflows", "broken.json"), `{"nodes": {"start": {"type": "start"}}, "edges": []}`)
	}, "workflow", levelFail, "broken.json: node \"start\"", 1, ""},
	{"list workflow with errors", func(s *doctorSetup) {
		s.write(filepath.Join(s.list, ".taskd", "workflows", "mine.json"), `{"nodes": {`)
	}, "workflow", levelFail, "mine.json", 1, ""},
	{"service installed but not running", func(s *doctorSetup) {
		s.service.Running, s.service.Detail = false, "failed"
	}, "service", levelFail, "installed (/home/alice/.config/systemd/user/taskd.service) but not running: failed", 1, ""},
	{"lock cannot be checked", func(s *doctorSetup) {
		s.lock.Unlock()
		lock := filepath.Join(s.root, ".taskd.lock")
		os.Remove(lock)
		os.Symlink(filepath.Join(s.dir, "gone"), lock)
	}, "daemon", levelFail, "check the daemon lock", 1, "service"},

	// Warnings: nothing fails.
	{"no service manager", func(s *doctorSetup) {
		s.serviceErr = &install.NoServiceManagerError{Manager: "systemd", Reason: "this system was not booted with systemd"}
	}, "service", levelWarn, "no service manager for a user service: this system was not booted with systemd.", 0, ""},
	{"no cgroup", func(s *doctorSetup) { s.supervision = proc.ByEnvironment }, "supervision", levelWarn, "by environment", 0, ""},
	{"service not installed", func(s *doctorSetup) { s.service = install.Status{} }, "service", levelWarn, "not installed", 0, ""},
	{"no daemon", func(s *doctorSetup) { s.lock.Unlock() }, "daemon", levelWarn, "none running", 0, ""},
	{"worktrees an earlier taskd made", func(s *doctorSetup) { os.MkdirAll(filepath.Join(s.list, ".taskd", "worktrees", "1"), 0o700) },
		"worktrees", levelWarn, "1 task has a worktree an earlier taskd made", 0, ""},
	{"service runs elsewhere", func(s *doctorSetup) { s.lock.Unlock() }, "service", levelWarn, "serves another root", 0, ""},
	{"root missing", func(s *doctorSetup) {
		s.env["TASKD_ROOT"] = filepath.Join(s.dir, "new")
		s.service = install.Status{}
	}, "root", levelWarn, "does not exist yet", 0, ""},
	{"list is a link", func(s *doctorSetup) {
		other := filepath.Join(s.dir, "other")
		os.Mkdir(other, 0o700)
		os.Symlink(other, filepath.Join(s.root, "linked"))
	}, "list linked", levelWarn, "is a symbolic link", 0, ""},
	{"task file in the root", func(s *doctorSetup) { s.write(filepath.Join(s.root, "7.json"), "{}") }, "root", levelWarn, "7.json is a task file in the root", 0, ""},
	{"misnamed task file", func(s *doctorSetup) { s.write(filepath.Join(s.list, "a b.json"), "{}") },
		"list demo", levelWarn, "a b.json: the name has a space", 0, ""},
	{"rejected task file", func(s *doctorSetup) {
		s.write(filepath.Join(s.list, ".taskd", "rejected", "1.json.txt"), "…/1.json: unknown agent\n")
	}, "list demo", levelWarn, "1 task file, 1 rejected by the daemon: 1", 0, ""},
	{"unused built-in profile's program missing", func(s *doctorSetup) { os.Remove(filepath.Join(s.bin, "opencode")) },
		"profile opencode", levelWarn, "nothing in the configuration asks for it", 0, ""},
	{"implicit default agent's program missing", func(s *doctorSetup) { os.Remove(filepath.Join(s.bin, "claude")) },
		"profile claude", levelWarn, "it is the default agent", 0, ""},
}

// Ensure each problem doctor knows is found, at its level, with a fix, and
// that only failures make it exit 1.
func TestDoctor(t *testing.T) {
	t.Run("healthy", func(t *testing.T) {
		out, checks, code := newDoctorSetup(t).run()
		if code != 0 || !strings.HasSuffix(out, "\nEverything looks fine.\n") {
			t.Errorf("healthy setup: exit %d:\n%s", code, out)
		}
		for _, want := range []string{"config", "root", "worktrees", "list demo", "daemon", "service", "supervision", "profile claude", "profile exec", "workflows"} {
			if c := findCheck(checks, want); c == nil || c.level != levelOK {
				t.Errorf("check %q = %+v, want ok\n%s", want, c, out)
			}
		}
	})
	for _, tt := range doctorTests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.HasSuffix(tt.name, "(needs root)") && os.Geteuid() != 0 {
				t.Skip("needs root to chown")
			}
			s := newDoctorSetup(t)
			tt.setup(s)
			out, checks, code := s.run()
			if code != tt.code {
				t.Errorf("exit %d, want %d:\n%s", code, tt.code, out)
			}
			c := findCheck(checks, tt.what)
			for _, other := range checks {
				if other.what == tt.what && strings.Contains(other.detail, tt.text) {
					c = &other
				}
			}
			if testing.Verbose() {
				t.Logf("report:\n%s", out)
			}
			if c == nil || c.level != tt.level || !strings.Contains(c.detail, tt.text) {
				t.Errorf("check %q = %+v, want %s with %q:\n%s", tt.what, c, tt.level, tt.text, out)
			}
			for _, c := range checks {
				if c.level != levelOK && c.fix == "" {
					t.Errorf("%s %s: no fix:\n%s", c.level, c.what, out)
				}
			}
			if q := findCheck(checks, tt.quiet); tt.quiet != "" && q != nil && q.level != levelOK {
				t.Errorf("check %q complains: %+v", tt.quiet, q)
			}
			if tt.code == 1 && !strings.Contains(out, fmt.Sprintf("%s  %s: ", levelFail, tt.what)) {
				t.Errorf("report lacks the failed line:\n%s", out)
			}
		})
	}
}

func findCheck(checks []check, what string) *check {
	for i := range checks {
		if checks[i].what == what {
			return &checks[i]
		}
	}
	return nil
}

// Ensure the command parses its flags and exits 1 when a check fails.
func TestDoctor_command(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := filepath.Join(t.TempDir(), "tasks")
	if err := os.Mkdir(root, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(root, 0o777)
	out, _, code := runCLI(t, "doctor", "--root", root)
	if code != 1 || !strings.Contains(out, "fail  root: ") || !strings.Contains(out, "fix: chmod go-w "+root) {
		t.Errorf("doctor on a world-writable root: exit %d:\n%s", code, out)
	}
	if _, errOut, code := runCLI(t, "doctor", "extra"); code != 2 || !strings.Contains(errOut, "usage: taskd doctor") {
		t.Errorf("doctor extra: exit %d, %s", code, errOut)
	}
}
