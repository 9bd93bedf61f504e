package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/internal/proc"
)

// becomeReaper makes the process the reaper of what agents leave
// (proc.Reap). Tests that run the daemon inside the test binary replace
// it: the test binary starts processes of its own without package proc,
// and the reaper would take their exit status.
var becomeReaper = proc.Reap

// listFlags collects a repeatable --list flag.
type listFlags []string

func (l *listFlags) String() string     { return strings.Join(*l, ",") }
func (l *listFlags) Set(v string) error { *l = append(*l, v); return nil }

// loadConfig resolves the root and reads the configuration file, the way
// every command that looks at task lists does.
func loadConfig(root, configPath string, lists []string) (*config.Config, error) {
	r, err := daemon.ResolveRoot(root, os.Getenv)
	if err != nil {
		return nil, err
	}
	optional := configPath == ""
	if optional {
		configPath = config.DefaultConfigPath()
	}
	fc, err := config.LoadFileConfig(configPath, optional)
	if err != nil {
		return nil, err
	}
	cfg, err := config.NewConfig(r, lists, fc)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", configPath, err)
	}
	cfg.ConfigPath = configPath
	return cfg, nil
}

func init() {
	register(&command{
		name:  "run",
		usage: "[--root DIR] [--list ID]... [--config FILE] [--nats URL] [--insecure] [--log-format text|json] [--log-level LEVEL] [--cpuprofile FILE]",
		short: "run the daemon in the foreground",
		group: "Daemon",
		long: `
Run runs the daemon in the foreground until it receives SIGINT or SIGTERM.
It is what the user service runs.

The root of task lists is --root, else $TASKD_ROOT, else
$CLAUDE_CONFIG_DIR/tasks, else ~/.claude/tasks; it is created if missing.
Every directory in it is a task list, watched for task files addressed to
taskd; --list ID (repeatable) restricts the daemon to those lists. Only one
daemon runs per root: a second one exits with a message naming the first.

The configuration file is --config FILE, else
$XDG_CONFIG_HOME/taskd/config.json if it exists. It sets agent profiles,
agent-name mappings, the concurrency limits and timeouts, and on Linux the
scheduling policy: SCHED_BATCH unless it says "scheduling": "normal", for
the daemon and, inherited, its agents (their nice values unchanged; a batch
process does not preempt a running normal or batch one when it wakes up).

For safety the daemon refuses a root or list that belongs to another user
or that other users can write to (they could make it run commands as you);
--insecure overrides this. It also refuses a list whose .taskd is, or
holds, a symbolic link, rejects task files of other users, and writes
nothing outside the root whatever a task file says (docs/security.md).

On SIGINT or SIGTERM running agents get SIGTERM, then SIGKILL after a grace
period; their tasks are recorded as interrupted and run again at the next
start. A daemon killed outright loses nothing either: at the next start a
task it left running is recovered from its run folder.

With --nats URL (or "nats": {"url": …} in the configuration) the daemon
is a coordinator: every state write stays as it is, but instead of
starting agents here it sends each attempt to taskd workers on other
machines through the NATS server's JetStream, and fills the run folders
with what they report; the profiles and lists named in "nats": {"local":
[…]} still run here. The server may be down: attempts wait, and their
tasks say so. One coordinator per prefix: one that finds another on its
nats.prefix exits with status 1, naming it (docs/distributed.md).

Logs go to stderr (the journal, under systemd): text by default,
--log-format json for machines; --log-level debug|info|warn|error. At the
default level, info, the daemon logs a line when it starts and stops, one
when a task's work starts ("task started": list, task, subject, attempt or
workflow), and one when the task ends ("task ended": outcome, how long it
ran, for a failure the reason), needs a person ("task needs a person") or
is paused by a usage limit ("task paused"), and nothing while it idles;
warnings say what went wrong. Debug shows every decision.

Run exits with status 0 after a signal. It fails at once (status 1, with
the reason and the fix) when the root is not a directory or other users
can write to it, when another daemon holds the root's lock ($ROOT/.taskd.lock,
naming its pid), and when the configuration file is invalid; a list that
other users can write to is not served, and the log says so. 'taskd doctor'
checks all of this without starting a daemon.
`,
		run: runDaemon,
	})
}

func runDaemon(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	var lists listFlags
	fs.Var(&lists, "list", "serve only this list (repeatable)")
	configFile := fs.String("config", "", "configuration file")
	natsURL := fs.String("nats", "", "NATS server: send agent runs to taskd workers (docs/distributed.md)")
	insecure := fs.Bool("insecure", false, "run even if the root or a list is another user's or writable by others")
	format := fs.String("log-format", "text", "log format: text or json")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the daemon to this file until it stops (docs/proof.md)")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return inv.usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	log, err := newLogger(inv, *format, *level)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(*root, *configFile, lists)
	if err != nil {
		return err
	}
	cfg.Insecure = *insecure
	if cfg.Scheduling == config.SchedulingBatch {
		// Not fatal: the daemon works under any policy, only less
		// politely (a container may forbid it).
		if err := setBatchScheduling(); err != nil {
			log.Warn("scheduling policy not set; the daemon and its agents run under the one it was started with", "err", err)
		}
	}
	// What an agent leaves behind comes back to the daemon, which waits
	// for it: no zombie, no orphan left to init. Every child the daemon
	// starts is started by package proc, which keeps it from the reaper.
	if err := becomeReaper(log); err != nil {
		log.Warn("not the reaper of what agents leave; such processes go to init", "err", err)
	}
	// Everything an attempt starts is killed with it (docs/security.md).
	sup := proc.Supervise()
	defer sup.Close()
	log.Debug("an attempt's processes are kept together", "supervision", sup.String())
	url := *natsURL
	if url == "" && cfg.NATS != nil {
		url = cfg.NATS.URL
	}
	clk := daemon.WithClock(clockOf(ctx))
	if url == "" {
		return daemon.New(cfg, log, clk).Run(ctx)
	}
	coord, err := remote.NewCoordinator(url, cfg, agent.NewLocal(cfg, log), log)
	if err != nil {
		return err
	}
	defer coord.Close()
	// A coordinator that finds another one on its prefix later (it
	// started while the server was away) stops the daemon.
	dctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-coord.Done():
			stop()
		case <-dctx.Done():
		}
	}()
	err = daemon.New(cfg, log, daemon.WithRunner(coord), clk).Run(dctx)
	if cerr := coord.Err(); cerr != nil {
		return cerr
	}
	return err
}

// startCPUProfile profiles the process's CPU into file until the
// function it returns is called.
func startCPUProfile(file string) (stop func(), err error) {
	f, err := fsroot.OpenRegular(file, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// newLogger is the logger of a long-running command: text or json (format)
// on stderr, at level.
func newLogger(inv *invocation, format, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, inv.usageErrorf("bad --log-level %q", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(inv.stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(inv.stderr, opts)), nil
	}
	return nil, inv.usageErrorf("bad --log-format %q", format)
}
