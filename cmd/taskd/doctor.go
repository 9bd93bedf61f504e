package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/taskd/taskd/install"
	"github.com/taskd/taskd/internal/proc"
)

func init() {
	register(&command{
		name:  "doctor",
		usage: "[--root DIR] [--list ID]... [--config FILE] [--agents]",
		short: "check the setup and say how to fix what is wrong",
		group: "Daemon",
		long: `
Doctor checks what taskd needs and prints one line per check, marked ok,
warn or fail, with the fix under every problem:

	config     the configuration file parses and is valid (--config FILE,
	           else ~/.config/taskd/config.json if it exists)
	root       the task root exists and other users cannot write to it
	worktrees  where the tasks' git worktrees are made: not under
	           ~/.claude, where Claude Code refuses every edit; and tasks
	           whose worktree an earlier taskd made in the list's .taskd
	list       each list (or each --list): a directory, not a link, that
	           other users cannot write to; task files the daemon rejected
	daemon     whether a daemon holds the root's lock ($ROOT/.taskd.lock),
	           and its pid
	service    whether the user service is installed and running
	supervision
	           how the daemon kills everything an attempt started, also
	           what left its process group (setsid, a double fork): by
	           cgroup (each attempt in a cgroup of its own), or, where it
	           can have none, by the TASKD_RUN_DIR in each process's
	           environment (a warning: a process that clears its
	           environment escapes that)
	profile    for each agent profile, whether its program (the first word
	           of its command) is found as the daemon finds it: on the
	           PATH of the running daemon when one runs (read from the
	           system where it can be), else on this shell's PATH, with
	           the directory of taskd first
	workflows  the built-in workflows, yours (~/.config/taskd/workflows)
	           and each list's (.taskd/workflows) load without errors

With --agents it also runs each agent profile in use (the default agent's
and those the configuration names; not shell-command profiles) for one
turn, asking it to answer OK, as the daemon would run it: with the
environment of the running daemon, else the one the user service would
start it with (systemd), else this shell's (and says so). A profile that
cannot start (executable missing), is not logged in or has no API key
(not authenticated), or cannot reach its API fails, with the fix. Each
check is a real model call, billed as one: --agents is never the default.

	agent      for each agent profile in use (--agents only): it started,
	           reached its model and answered, and what that cost

It fails only on what stops tasks from running: an unsafe or unusable
root or list, a bad configuration, a configured profile whose program is
missing, a workflow with errors, a service that is installed but not
running, a lock that cannot be checked. The rest are warnings: no daemon
running, no service installed or no service manager (in a container, run
'taskd run' yourself), a built-in profile you do not use whose program is
missing, rejected task files.

Doctor changes nothing (with --agents, the agents keep their own record
of the session, as for any run). It exits with status 0 when no check failed, and
1 otherwise.
`,
		run: runDoctor,
	})
}

func runDoctor(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	var lists listFlags
	fs.Var(&lists, "list", "check only this list (repeatable)")
	configFile := fs.String("config", "", "configuration file")
	agents := fs.Bool("agents", false, "run each agent profile in use for one turn (a model call, billed)")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return inv.usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	d := newDoctor(*root, *configFile, lists)
	d.agents = *agents
	d.run(ctx)
	return d.report(inv.stdout)
}

// Levels of a check's outcome.
const (
	levelOK   = "ok"
	levelWarn = "warn"
	levelFail = "fail"
)

// A check is one line of the report.
type check struct {
	level  string // levelOK, levelWarn or levelFail
	what   string // what was checked: "root", "list demo", "profile claude"
	detail string // what was found
	fix    string // what to do; set for every warning and failure
}

// doctor runs the checks. Its fields are what the checks look at; tests
// replace those that reach beyond the file system.
type doctor struct {
	rootFlag, configFlag string
	lists                []string
	getenv               func(string) string
	home                 string // shown as ~
	exe                  string // this taskd binary: the agents' PATH starts with its directory
	// service reports the user service (install.Service.Status).
	service func(ctx context.Context) (install.Status, error)
	// daemonEnv reads the PATH and the binary of the daemon process pid;
	// ok is false when the system does not tell.
	daemonEnv func(pid int) (path, exe string, ok bool)
	// supervision says how the daemon pid (0: one started here) keeps
	// an attempt's processes together (proc.SupervisionOf).
	supervision func(pid int) (proc.Mode, string)

	// agents: run each agent profile in use for one turn (--agents), for
	// at most agentTimeout, with the environment daemonEnviron reads of
	// the daemon process pid, else the one serviceEnviron says the user
	// service would get.
	agents         bool
	agentTimeout   time.Duration
	daemonEnviron  func(pid int) ([]string, bool)
	serviceEnviron func(ctx context.Context) (env []string, where string, ok bool)

	checks []check
}

// newDoctor returns a doctor for this process and machine.
func newDoctor(root, configFile string, lists []string) *doctor {
	home, _ := os.UserHomeDir()
	exe, _ := os.Executable()
	return &doctor{
		rootFlag: root, configFlag: configFile, lists: lists,
		getenv: os.Getenv, home: home, exe: exe,
		service: func(ctx context.Context) (install.Status, error) {
			s, err := install.New()
			if err != nil {
				return install.Status{}, err
			}
			return s.Status(ctx)
		},
		daemonEnv:    procEnv,
		agentTimeout: agentCheckTimeout, daemonEnviron: procEnviron, serviceEnviron: systemdEnviron,
		supervision: proc.SupervisionOf,
	}
}

func (d *doctor) add(level, what, detail, fix string) {
	d.checks = append(d.checks, check{level: level, what: what, detail: detail, fix: fix})
}

// run performs every check, in the order of the report.
func (d *doctor) run(ctx context.Context) {
	cfg, fc := d.checkConfig()
	root, usable := d.checkRoot()
	d.checkWorktrees(root)
	var ds daemonState
	if usable {
		d.checkLists(root)
		ds = d.checkDaemon(root)
	}
	d.checkService(ctx, ds)
	d.checkSupervision(ds.pid)
	d.checkProfiles(cfg, fc, ds.pid)
	d.checkWorkflows(root, usable)
	if d.agents {
		d.checkAgents(ctx, cfg, fc, ds.pid)
	}
}

// report prints the checks and a summary, and returns an error with exit
// status 1 when a check failed.
func (d *doctor) report(w io.Writer) error {
	var fails, warns int
	for _, c := range d.checks {
		fmt.Fprintf(w, "%-4s  %s: %s\n", c.level, c.what, clean(c.detail))
		if c.fix != "" {
			fmt.Fprintf(w, "      fix: %s\n", clean(c.fix))
		}
		switch c.level {
		case levelFail:
			fails++
		case levelWarn:
			warns++
		}
	}
	switch {
	case fails > 0:
		fmt.Fprintf(w, "\n%d %s failed, %d %s.\n", fails, plural(fails, "check", "checks"), warns, plural(warns, "warning", "warnings"))
		return &exitError{code: 1}
	case warns > 0:
		fmt.Fprintf(w, "\nNo check failed; %d %s.\n", warns, plural(warns, "warning", "warnings"))
	default:
		fmt.Fprintln(w, "\nEverything looks fine.")
	}
	return nil
}

// path shows p for a person, with the home directory as ~, quoted for a
// shell when it needs to be (then in full: ~ does not expand in quotes).
func (d *doctor) path(p string) string {
	if strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:@%+,") != "" {
		return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
	}
	if d.home != "" && d.home != "/" && (p == d.home || strings.HasPrefix(p, d.home+"/")) {
		return "~" + p[len(d.home):]
	}
	return p
}

// procEnv reads the PATH and the executable of process pid from /proc,
// where the system has it (Linux, for a process of the same user).
func procEnv(pid int) (path, exe string, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return "", "", false
	}
	for _, kv := range bytes.Split(data, []byte{0}) {
		if v, found := bytes.CutPrefix(kv, []byte("PATH=")); found {
			path, ok = string(v), true
		}
	}
	exe, _ = os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	return path, strings.TrimSuffix(exe, " (deleted)"), ok
}
