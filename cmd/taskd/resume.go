package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/taskfile"
)

func init() {
	register(&command{
		name:  "pause",
		usage: "[--root DIR] [--config FILE] [--stop] [--reason TEXT] LIST | --list LIST | --profile PROFILE | --all",
		short: "start no new agent in a list, of a profile, or at all, until resumed",
		group: "Tasks",
		long: `
Pause keeps the daemon from starting new agents: in the list named (or
--list LIST), of an agent profile (--profile PROFILE), or anywhere (--all),
until 'taskd resume' lifts the pause. Agents already running go on to
their ends; with --stop they are interrupted too (SIGTERM, then SIGKILL
after the grace period), and their tasks, recorded as interrupted, run
again once resumed (a claude agent resumes its session). A task prepared
ahead of its slot gives its claim back. Tasks may still be submitted:
they wait. A schedule still makes its runs at their times; they wait too
(a run that waits counts as going on: the times after it are passed over).

The pause is recorded in the root's pause file, .taskd-pauses.json, which
the daemon reads whenever it changes, so a restart keeps it. --reason
TEXT says why, for 'taskd status', which shows every pause on the list's
line and on each task it holds (for a profile, the tasks whose agents run
with it by the configuration, --config FILE or the user's).

	taskd pause nightly
	taskd pause --all --stop --reason 'demo at 3pm'
	taskd resume --all

Pause fails (status 1) when the pause file cannot be written; it prints
its usage (status 2) unless exactly one of LIST, --list, --profile and
--all is given.
`,
		run: runPause,
	}, &command{
		name:  "resume",
		usage: "[--root DIR] NAME | --list LIST | --profile PROFILE | --all",
		short: "lift a pause: of a list, a profile (also a usage limit's), or of all",
		group: "Tasks",
		long: `
Resume lifts a pause before it ends by itself, and the tasks it held may
start at once: the pause 'taskd pause' set on a list (--list LIST), on an
agent profile (--profile PROFILE) or on everything (--all); the pause a
budget per window put a list or a profile in until its next window (the
budget then holds nothing more until that window's end); and, for a
profile, the pause a usage limit put it in: the tasks the limit paused
resume now (their sessions, for claude), instead of at the reset time the
agent named or at the end of the backoff. Use it when you know the limit
is gone sooner (a plan upgraded, a key changed). A NAME alone is the list
of that name if it is paused, else the profile.

Pauses are recorded in the root's pause file, .taskd-pauses.json, which
the daemon reads when it starts and whenever it changes: resume removes
the pause from it, and makes each task the profile's limit paused due now
(metadata.taskd.retryAt and pause.until). With no daemon running, the
tasks start when one does. Should the agent meet the limit again, or the
budget be spent again in a later window, the pause comes back.

'taskd status' shows, on every task a pause holds, what paused it and
until when, and the resume command that lifts it (docs/scheduling.md,
docs/agents.md).

Resume fails (status 1) when nothing of that name is paused and no task
is paused by it.
`,
		run: runResume,
	})
}

// pauseScope reads which of NAME, --list, --profile and --all a pause or
// resume command names; NAME is returned apart, for resume to decide.
func pauseScope(inv *invocation, fs *flagSet, list, profile string, all bool) (pausefile.Scope, string, error) {
	given := 0
	for _, b := range []bool{list != "", profile != "", all, fs.NArg() > 0} {
		if b {
			given++
		}
	}
	if given != 1 || fs.NArg() > 1 {
		return pausefile.Scope{}, "", inv.usageErrorf("name one list, --list LIST, --profile PROFILE or --all")
	}
	switch {
	case all:
		return pausefile.Scope{Kind: pausefile.All}, "", nil
	case profile != "":
		return pausefile.Scope{Kind: pausefile.Profile, Name: profile}, "", nil
	case list != "":
		return pausefile.Scope{Kind: pausefile.List, Name: list}, "", nil
	}
	return pausefile.Scope{}, fs.Arg(0), nil
}

func runPause(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	list := fs.String("list", "", "the list to pause")
	profile := fs.String("profile", "", "the agent profile to pause")
	all := fs.Bool("all", false, "pause everything")
	stop := fs.Bool("stop", false, "interrupt the agents running in what is paused too")
	reason := fs.String("reason", "", "why, for taskd status")
	cfgPath := fs.String("config", "", "configuration file, for the agents a paused profile runs (default: the user's)")
	if err := inv.parse(fs); err != nil {
		return err
	}
	scope, name, err := pauseScope(inv, fs, *list, *profile, *all)
	if err != nil {
		return err
	}
	if name != "" {
		scope = pausefile.Scope{Kind: pausefile.List, Name: name}
	}
	if scope.Kind == pausefile.List && !taskfile.ValidID(scope.Name) {
		return inv.usageErrorf("%q is not a list name (1-128 of A-Z a-z 0-9 _ -)", scope.Name)
	}
	if scope.Kind == pausefile.Profile && (len(scope.Name) > 128 || strings.ContainsAny(scope.Name, "\x00\n")) {
		return inv.usageErrorf("%q is not a profile name", scope.Name)
	}
	r, err := daemon.ResolveRoot(*root, os.Getenv)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(r, 0o700); err != nil {
		return err
	}
	now := clockOf(ctx).Now()
	p := pausefile.Pause{By: pausefile.ByPerson, Since: now, Stop: *stop, Reason: strings.TrimSpace(*reason)}
	if p.Reason == "" {
		p.Reason = "taskd pause"
	}
	if scope.Kind == pausefile.Profile {
		// Which tasks it holds, for taskd status: those whose agent runs
		// with the profile, by the configuration (the default one).
		if cfg, err := loadConfig(*root, *cfgPath, nil); err == nil {
			p.Agents, p.Default = cfg.AgentsOf(scope.Name)
		}
	}
	if err := pausefile.Begin(ctx, r, scope, p, now); err != nil {
		return err
	}
	what := "no new agent starts"
	if *stop {
		what += "; the running ones are interrupted, to run again once resumed"
	}
	fmt.Fprintf(inv.stdout, "%s: paused (%s) until 'taskd resume%s'\n", scope, what, resumeArgs(scope))
	warnNoDaemon(inv, r)
	return nil
}

// resumeArgs are the arguments of the resume of scope s.
func resumeArgs(s pausefile.Scope) string {
	switch s.Kind {
	case pausefile.All:
		return " --all"
	case pausefile.Profile:
		return " --profile " + s.Name
	}
	return " " + s.Name
}

func runResume(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	list := fs.String("list", "", "the list whose pause to lift")
	profile := fs.String("profile", "", "the agent profile whose pause to lift")
	all := fs.Bool("all", false, "lift the pause of everything")
	if err := inv.parse(fs); err != nil {
		return err
	}
	scope, name, err := pauseScope(inv, fs, *list, *profile, *all)
	if err != nil {
		return err
	}
	r, err := daemon.ResolveRoot(*root, os.Getenv)
	if err != nil {
		return err
	}
	if name != "" {
		scope = pausefile.Scope{Name: name} // a paused list of that name, else the profile
	}
	l, err := pausefile.End(ctx, r, scope, clockOf(ctx).Now())
	if errors.Is(err, pausefile.ErrNotPaused) {
		return &exitError{code: 1, err: err}
	}
	if err != nil {
		return err
	}
	scope, resumed := l.Scope, l.Resumed
	if l.Unreadable != nil {
		fmt.Fprintf(inv.stdout, "the pause file could not be read (%v): it is replaced, and every pause it held is lifted\n", l.Unreadable)
	}
	if l.Held != nil {
		fmt.Fprintf(inv.stdout, "%s: pause lifted (%s)\n", scope, l.Held.Reason)
	}
	switch {
	case l.Limit != nil:
		fmt.Fprintf(inv.stdout, "%s: pause lifted (%s, until %s)\n", scope, l.Limit.Reason, l.Limit.Until.Local().Format("Jan 2 15:04"))
	case l.Held == nil:
		fmt.Fprintf(inv.stdout, "%s: not paused any more\n", scope)
	}
	if len(resumed) > 0 {
		fmt.Fprintf(inv.stdout, "resume now: %s\n", strings.Join(resumed, " "))
	}
	return nil
}
