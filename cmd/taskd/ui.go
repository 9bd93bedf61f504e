package main

import (
	"context"
	"fmt"
	"os"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/held"
	"github.com/taskd/taskd/daemon/ui"
)

func init() {
	register(&command{
		name:  "ui",
		usage: "[--root DIR] [--list ID]... [--all] [--color auto|always|never]",
		short: "a live terminal view of every task, from which you answer, cancel and review",
		group: "Tasks",
		long: `
Ui shows the task root full screen and keeps it up to date as the files
change: the tree of lists and tasks (as taskd status shows them: state,
step, attempt, age, subject), under each running agent its progress
(turn, the tool it called last and its target, tokens, cost, cost per
minute), and a ! on every task that needs a person and on every list and
task above it. The selected task's detail follows: what it waits for and
the answers it takes, why it failed, its branch and what its work
changed, its children, and the last lines of its latest attempt's
transcript as taskd logs -f shows it. The heading counts what runs,
waits, needs a person and failed, adds up what the agents cost today by
profile, and names the profiles a usage limit paused.

From the view you act on the selected task through the same code as the
commands: enter answers it (taskd resolve, with a note typed in place),
a allows the calls it was refused, c cancels it and the tasks below it,
r retries it, R restarts it, x removes it, p lifts the pause of the
profile that holds it back (taskd resume), P pauses its list or resumes
the list paused (taskd pause LIST, taskd resume LIST), d shows its
worktree's diff and o all its output in $PAGER (else less). Each action
that changes a task or a pause asks first. ? lists every key; q or Ctrl-C quits and leaves the
terminal as it was.

It reads files only, as taskd status does, so it works whether or not a
daemon runs; it reads a file again when a file event says it changed,
and the transcript of the selected task as it grows. --list shows only
the lists named, --all every task (not only taskd's). Colour is used on
a terminal unless NO_COLOR is set (--color overrides); the cursor is
also a > and a task that needs a person a !, so nothing depends on
colour. docs/ui.md describes the screen.

Ui fails when standard input or output is not a terminal (taskd status
--watch redraws a table instead), and when the root cannot be found.
`,
		run: runUI,
	})
}

func runUI(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	var lists listFlags
	fs.Var(&lists, "list", "show only this list (repeatable)")
	all := fs.Bool("all", false, "show every task, not only taskd's")
	colorFlag := fs.String("color", "auto", "auto, always or never")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return inv.usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	r, err := daemon.ResolveRoot(*root, os.Getenv)
	if err != nil {
		return err
	}
	if !isTerminal(os.Stdin) || !isTerminal(inv.stdout) {
		return fmt.Errorf("taskd ui needs a terminal; 'taskd status --watch' redraws a table instead")
	}
	color, err := useColor(inv, *colorFlag)
	if err != nil {
		return err
	}
	home, _ := os.UserHomeDir()
	return ui.Run(ctx, ui.Options{
		Root: r, Lists: lists, All: *all, Color: color, Home: home,
		Daemon: func() ui.Daemon {
			d := daemonOf(r)
			return ui.Daemon{Running: d.running, PID: d.pid, Err: d.err}
		},
		Held:  func() []held.Task { return daemon.HeldTasks(r) },
		Pager: os.Getenv("PAGER"),
		In:    os.Stdin,
		Out:   inv.stdout,
	})
}
