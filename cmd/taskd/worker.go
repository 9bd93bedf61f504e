package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/worker"
	"github.com/taskd/taskd/internal/fsroot"
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
		usage: "[--config FILE] [--nats URL] [--profiles claude,exec] [--label L]... [--concurrency N] [--dir-map FROM=TO]... [--state DIR] [--name NAME] [--heartbeat D] [--grace D] [--drain-timeout D] [--drain] [--log-format text|json] [--log-level LEVEL] [--cpuprofile FILE]",
		short: "run agents for a coordinator on another machine",
		group: "Daemon",
		long: `
Worker runs, on this machine, the agent attempts that a coordinator (taskd
run --nats URL, on the machine with the task directory) sends through the
NATS server at URL, until it receives SIGINT or SIGTERM.

--config FILE is a taskd configuration file: its "nats" section says how
to reach the server (url, credentials, TLS, prefix), which coordinators'
attempts to run (coordinatorKeys: their public keys; a worker runs only
attempts signed by one of them) and the worker's own key (signingKey;
without one the worker makes one in its state directory and logs its
public key, which the coordinator must list in its nats.workerKeys); its
"profiles" define the profiles the worker runs. --nats overrides the url.

It serves the profiles --profiles names (comma-separated; default:
claude, opencode, codex and exec), each as its own configuration defines
it: an attempt names a profile, never a command line. It takes the
attempts of those profiles that ask for no label, or only for labels it
has (--label, repeatable: a task's metadata.taskd.labels), at most
--concurrency at once (default: the number of CPUs), and runs each exactly
as the daemon would: the profile's command line, its own process group,
the timeout, and an environment built from the worker's own environment
with the profile's allow-list (only the names travel). It sends the
agent's output back as it grows and its result when it ends; the
coordinator writes the task files and run folders. Every --heartbeat D
(default 5s) it tells the server it is alive and what it runs; a worker
silent for longer than the coordinator's nats.lostAfter loses its
attempts, which run again elsewhere.

An attempt runs in the coordinator's working directory mapped by the
longest --dir-map FROM=TO (repeatable) whose FROM contains it, or, when
the task names a repository (metadata.taskd.repo, and ref), in a git
worktree of it that the worker makes for the attempt. A directory that
does not exist here fails the attempt, saying so. The worker keeps its
run folders, clones and key in --state DIR (default
$XDG_STATE_HOME/taskd/worker); one worker per state directory.

SIGINT or SIGTERM drains the worker: it takes no new attempt, lets those
that run finish for --drain-timeout D (default 10m), then stops what
still runs (SIGTERM to each agent's process group, SIGKILL after --grace
D, default 10s) and reports it interrupted, to run again elsewhere; a
second signal stops them at once. taskd worker --drain [--state DIR]
drains the worker that runs on that state directory and waits until it
has stopped.

It fails at once (status 1) when the configuration is invalid, names a
profile it does not define or no coordinator key, when the server refuses
its credentials, or when another worker uses the state directory; with
status 2 on a bad flag. taskd workers lists the workers a coordinator
sees; docs/distributed.md describes a deployment.
`,
		run: runWorker,
	})
}

// labelFlags collects a repeatable --label flag.
type labelFlags []string

func (l *labelFlags) String() string     { return strings.Join(*l, ",") }
func (l *labelFlags) Set(v string) error { *l = append(*l, v); return nil }

func runWorker(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	url := fs.String("nats", "", "NATS server URL")
	configFile := fs.String("config", "", "configuration file: the nats section, and the profiles")
	profiles := fs.String("profiles", strings.Join(worker.DefaultProfiles, ","), "profiles to serve, comma-separated")
	var labels labelFlags
	fs.Var(&labels, "label", "a label this worker has, for tasks that ask for it (repeatable)")
	concurrency := fs.Int("concurrency", runtime.NumCPU(), "agents at once")
	var maps dirMaps
	fs.Var(&maps, "dir-map", "FROM=TO: the coordinator's directory FROM is TO here (repeatable)")
	state := fs.String("state", "", "the worker's own directory")
	name := fs.String("name", "", "the worker's name in what it reports (default: host name and pid)")
	heartbeat := fs.Duration("heartbeat", 0, "how often the worker says it is alive (default: nats.heartbeat, else 5s)")
	grace := fs.Duration("grace", config.DefaultGrace, "between SIGTERM and SIGKILL when an agent is stopped")
	drainTimeout := fs.Duration("drain-timeout", worker.DefaultDrainTimeout, "how long a stopping worker lets its agents finish")
	drain := fs.Bool("drain", false, "drain the worker running on --state, and wait until it has stopped")
	format := fs.String("log-format", "text", "log format: text or json")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the worker to this file until it stops (docs/distributed.md)")
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
	home, _ := os.UserHomeDir()
	if *state == "" {
		*state = defaultStateDir(home)
	}
	if *drain {
		return drainWorker(ctx, inv, *state)
	}
	log, err := newLogger(inv, *format, *level)
	if err != nil {
		return err
	}
	fc := &config.FileConfig{}
	if *configFile != "" {
		if fc, err = config.LoadFileConfig(*configFile, false); err != nil {
			return err
		}
	}
	cfg, err := config.NewConfig("", nil, fc)
	if err != nil {
		return fmt.Errorf("config %s: %w", *configFile, err)
	}
	if *url == "" && fc.NATS != nil {
		*url = fc.NATS.URL
	}
	if *url == "" {
		return inv.usageErrorf("--nats URL is required (or a nats url in --config)")
	}
	if *concurrency < 1 || *concurrency > config.MaxConcurrency {
		return inv.usageErrorf("--concurrency %d: want 1 to %d", *concurrency, config.MaxConcurrency)
	}
	if *heartbeat != 0 && *heartbeat < 100*time.Millisecond {
		return inv.usageErrorf("--heartbeat %s: want at least 100ms", *heartbeat)
	}
	if *name == "" {
		host, _ := os.Hostname()
		*name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	// What an agent leaves behind comes back to the worker, as to the
	// daemon (package proc).
	if err := proc.Reap(log); err != nil {
		log.Warn("not the reaper of what agents leave; such processes go to init", "err", err)
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
	w := worker.New(worker.Config{
		URL: *url, NATS: fc.NATS, Name: *name, Profiles: worker.ParseProfiles(*profiles), Defined: cfg.Profiles,
		Labels: labels, Concurrency: *concurrency, DirMap: maps, State: *state, Heartbeat: *heartbeat,
		Grace: *grace, DrainTimeout: *drainTimeout, Executable: exe, Home: home, Version: shortVersion(),
	}, log)
	// The first SIGINT or SIGTERM ends ctx (a drain); the second stops
	// what still runs at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		n := 0
		for range sigs {
			if n++; n == 2 {
				w.Stop()
			}
		}
	}()
	return w.Run(ctx)
}

// drainWorker asks the worker that runs on state to drain (SIGTERM), and
// waits until it has stopped, saying what it waits for.
func drainWorker(ctx context.Context, inv *invocation, state string) error {
	if !workerRuns(state) {
		return fmt.Errorf("no worker runs on %s", state)
	}
	data, err := fsroot.ReadRegular(filepath.Join(state, "worker.pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return fmt.Errorf("the worker on %s left no pid in worker.pid: %v", state, err)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("signal the worker on %s (pid %d): %w", state, pid, err)
	}
	fmt.Fprintf(inv.stdout, "draining the worker on %s (pid %d): it takes no new attempt and stops once those it runs have ended\n", state, pid)
	last := -1
	for {
		if !workerRuns(state) {
			fmt.Fprintln(inv.stdout, "the worker has stopped")
			return nil
		}
		entries, _ := fsroot.ReadDirectory(filepath.Join(state, "attempts"))
		if n := len(entries); n != last {
			fmt.Fprintf(inv.stdout, "%d attempt(s) still run\n", n)
			last = n
		}
		select {
		case <-ctx.Done():
			return errors.New("stopped waiting; the worker goes on draining")
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// workerRuns reports whether a worker holds the lock of the state
// directory state.
func workerRuns(state string) bool {
	f, err := fsroot.OpenRegular(filepath.Join(state, "worker.lock"), os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) == syscall.EWOULDBLOCK
}

// defaultStateDir is $XDG_STATE_HOME/taskd/worker, or
// ~/.local/state/taskd/worker.
func defaultStateDir(home string) string {
	if s := os.Getenv("XDG_STATE_HOME"); s != "" {
		return filepath.Join(s, "taskd", "worker")
	}
	return filepath.Join(home, ".local", "state", "taskd", "worker")
}
