package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/worker"
	"github.com/taskd/taskd/internal/proc"
)

// dirMaps collects a repeatable --dir-map flag.
type dirMaps []worker.Mapping

func (d *dirMaps) String() string { return fmt.Sprint(*d) }
func (d *dirMaps) Set(v string) error {
	m, err := worker.ParseMapping(v)
	if err == nil {
		*d = append(*d, m)
	}
	return err
}

func init() {
	register(&command{
		name:  "worker",
		usage: "--nats URL [--config FILE] [--profiles claude,exec] [--concurrency N] [--dir-map FROM=TO]... [--state DIR] [--name NAME] [--ack-wait D] [--log-format text|json] [--log-level LEVEL]",
		short: "run agents for a coordinator on another machine",
		group: "Daemon",
		long: `
Worker runs, on this machine, the agent attempts that a coordinator (taskd
run --nats URL, on the machine with the task directory) sends through the
NATS server at URL, until it receives SIGINT or SIGTERM.

It pulls attempts of the profiles it serves (--profiles, comma-separated;
default: claude, opencode, codex and exec), at most --concurrency at once
(default: the number of CPUs), and runs each exactly as the daemon would:
the profile's command line, its own process group, the timeout, and an
environment built from the worker's own environment with the profile's
allow-list (only the names travel). It tells the server it is alive while
an agent runs, sends the agent's output back as it grows and its result
when it ends; the coordinator writes the task files and run folders.

An attempt runs in the coordinator's working directory mapped by the
longest --dir-map FROM=TO (repeatable) whose FROM contains it, or, when
the task names a repository (metadata.taskd.repo, and ref), in a git
worktree of it that the worker makes for the attempt. A directory that
does not exist here fails the attempt, saying so.

--config FILE reads the "nats" section of a taskd configuration file
(credentials, TLS, prefix, ackWait); --nats overrides its url. The worker
keeps its run folders and clones in --state DIR (default
$XDG_STATE_HOME/taskd/worker); one worker per state directory. --ack-wait D
(default 30s) is how long the worker may stay silent before the server
gives its attempts to another worker; they are then recorded as
interrupted and run again.

On SIGINT or SIGTERM the worker stops its agents (SIGTERM, then SIGKILL
after the grace period) and reports them interrupted; their coordinators
run them again. It fails at once (status 1) when the configuration is
invalid or another worker uses the state directory, and with status 2 on
a bad flag. docs/distributed.md describes a deployment.
`,
		run: runWorker,
	})
}

func runWorker(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	url := fs.String("nats", "", "NATS server URL")
	configFile := fs.String("config", "", "configuration file with a nats section")
	profiles := fs.String("profiles", strings.Join(worker.DefaultProfiles, ","), "profiles to serve, comma-separated")
	concurrency := fs.Int("concurrency", runtime.NumCPU(), "agents at once")
	var maps dirMaps
	fs.Var(&maps, "dir-map", "FROM=TO: the coordinator's directory FROM is TO here (repeatable)")
	state := fs.String("state", "", "the worker's own directory")
	name := fs.String("name", "", "the worker's name in what it reports (default: host name and pid)")
	ackWait := fs.Duration("ack-wait", 0, "how long the worker may stay silent before its attempts go to another (default 30s)")
	grace := fs.Duration("grace", config.DefaultGrace, "between SIGTERM and SIGKILL when an agent is stopped")
	format := fs.String("log-format", "text", "log format: text or json")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return inv.usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	log, err := newLogger(inv, *format, *level)
	if err != nil {
		return err
	}
	var nc *config.NATS
	if *configFile != "" {
		fc, err := config.LoadFileConfig(*configFile, false)
		if err != nil {
			return err
		}
		nc = fc.NATS
	}
	if *url == "" && nc != nil {
		*url = nc.URL
	}
	if *url == "" {
		return inv.usageErrorf("--nats URL is required (or a nats url in --config)")
	}
	if *concurrency < 1 || *concurrency > config.MaxConcurrency {
		return inv.usageErrorf("--concurrency %d: want 1 to %d", *concurrency, config.MaxConcurrency)
	}
	if *ackWait != 0 && *ackWait < time.Second {
		return inv.usageErrorf("--ack-wait %s: want at least 1s", *ackWait)
	}
	home, _ := os.UserHomeDir()
	if *state == "" {
		*state = defaultStateDir(home)
	}
	if *name == "" {
		host, _ := os.Hostname()
		*name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	exe, _ := os.Executable()
	// As the daemon: what agents leave comes back to the worker, which
	// waits for it, and an attempt's processes are killed together.
	if err := proc.Reap(log); err != nil {
		log.Warn("not the reaper of what agents leave; such processes go to init", "err", err)
	}
	sup := proc.Supervise()
	defer sup.Close()
	log.Debug("an attempt's processes are kept together", "supervision", sup.String())
	return worker.New(worker.Config{
		URL: *url, NATS: nc, Name: *name, Profiles: worker.ParseProfiles(*profiles), Concurrency: *concurrency,
		DirMap: maps, State: *state, AckWait: *ackWait, Grace: *grace, Executable: exe, Home: home,
	}, log).Run(ctx)
}

// defaultStateDir is $XDG_STATE_HOME/taskd/worker, or
// ~/.local/state/taskd/worker.
func defaultStateDir(home string) string {
	if s := os.Getenv("XDG_STATE_HOME"); s != "" {
		return filepath.Join(s, "taskd", "worker")
	}
	return filepath.Join(home, ".local", "state", "taskd", "worker")
}
