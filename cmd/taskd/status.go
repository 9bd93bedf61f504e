package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/internal/fsroot"
)

func init() {
	register(&command{
		name:  "status",
		usage: "[--root DIR] [--config FILE] [--list ID]... [--all] [--json] [--watch] [--color auto|always|never] [TASK]",
		short: "show tasks: state, step, attempt, age, as a tree",
		group: "Tasks",
		long: `
Status shows the tasks of every list (or of the --list ones): taskd's own
tasks, or with --all every task. It reads the task files only, so it works
whether or not a daemon runs; its first line names the root and says
whether a daemon serves it.

With a task (LIST/ID, or an id alone, as below) it shows that task's tree:
the task, its children and the tasks below them, with their notes; --json
prints that list alone, with those tasks.

Each list starts with a count of its tasks by state (and "paused" when a
pause holds the whole list). Then one line per
task: its id; its state; STEP, a workflow's current step and how many
steps have run (retries included): "review 2/…" while it goes on, "end
3/3" once it has ended; ATT, the attempt: a task's agent attempts (2 after
one retry) or, for a workflow, the attempts of its current step (1, unless
the step was retried), so that a clean two-step workflow shows 1; how long
ago it entered its state (5s, 3m, 2h, 4d); and its subject, after its
priority ([+5]) when it has one and has not ended. Children are
drawn under their parent (a waiting parent, or a workflow's fork with one
child per branch). The state is metadata.taskd.state (starting, running, waiting,
needs_human, retrying, paused, succeeded, failed, cancelled, timed_out,
stopped, or queued for a child waiting for /run), else pending, blocked
(by tasks in blockedBy that have not completed) or rejected (a file the
daemon will not run); held, whatever the file says, while the running
daemon holds the task back. Under a task, notes say what it waits for and
what to do:

	in ~/src/app · turn 3 · Edit a.go · 12.3k tokens · $0.04
	              where a running agent works (its worktree's branch, if
	              it has one) and, for a streaming agent, its progress
	taskd/l/7 · 3 files changed
	              an ended task's git branch and what its work changed
	              ("no changes" when nothing was committed); taskd diff
	              shows it
	waiting for:  what a starting task waits for: a slot (it is claimed
	              and its attempt prepared; Claude Code's list shows it
	              pending until its agent starts); why a needs_human task
	              waits, and
	answer:       the 'taskd resolve' command with the answers it accepts;
	              for a waiting task, which of its children (or of the
	              tasks it handed work to) have not ended: "2 of 3
	              children: b (5), c (6)"
	blocked by:   the blockers that have not completed
	paused:       when a task a usage limit paused resumes, and
	limit:        the limit, in the agent's words; on a list, the pause
	              taskd pause (or a budget per window) set on it
	waiting for:  what holds a pending task back: a pause of its list,
	              its profile or of everything, or a window of hours of
	              its list or profile (read from the configuration,
	              --config FILE, else the default one)
	starts:       when a task given a time to start (submit --at, --in)
	              starts; such a task is shown scheduled
	schedule:     a schedule's cron expression, its next run, how many
	              it made and the last; it is shown recurring
	waiting for:  on a task that could start, the agent profile whose
	              pause (a usage limit another task met) holds it back,
	              until when and why; under both, the 'taskd resume'
	              command that lifts the pause now
	interrupted:  on a pending task, that the daemon stopped while its
	              attempt ran, and that it runs again (a claude agent
	              resuming its session)
	error:        why a task failed, in the agent's own words where it
	              gave any, with where its logs are, and
	retry:        the 'taskd retry' and 'taskd logs' commands for it
	held:         why the daemon holds a task back (a write it needs
	              failed: a full disk, a lock nobody can take), and when
	              it tries again; no agent starts meanwhile
	output cut:   how much the cap on each log of the latest attempt
	              (outputMaxMiB) cut from its middle
	below:        on each task above one that needs a person, failed or
	              is held, which one, so the path to it is marked
	rejected:     what is wrong with the file, and
	fix:          how to fix it

A root or list that belongs to another user, that other users can write
to, or whose .taskd is or holds a symbolic link is marked refused, with the
command that fixes it: the daemon ignores it (see taskd help run). A file
whose name cannot be a task id (such as "a b.json") is shown as not read,
with how to rename it. With --json, a list has "refused" and "fix", and
"misnamed" for such files.

The output fits 80 columns and is coloured only on a terminal (--color
always or never overrides; NO_COLOR is honoured). --json prints the same
data as JSON for scripts: an array of lists, each {"id", "tasks",
"hidden"}, each task with the fields above ("state", "step", "attempt",
"since", "parent", "children", "waitingFor", "options", "error",
"blockedBy", "rejected", "fix", "held", "heldRetry", "below", "cwd", "worktree" {"path", "branch",
"repo", "dir", "base", "commit", "filesChanged", "insertions", "deletions":
metadata.taskd.workspace}, "progress" {"attempt", "turns", "lastTool", "tokens", "costUsd",
"costEstimated"}, "pausedBy", "resumesAt", "pausedProfile", "pause" {"profile",
"reason", "by", "until"}: the paused profile that holds the task back,
"logs": the latest attempt's
run folder, "summary" and "costUsd": what the agent of the latest attempt
that ended said it did and what that attempt cost, "outputCut" {log: bytes
cut}, "cwdNote": why a task of a Claude Code session's list runs in the
home directory, "name", "steps", "waits" {"kind", "total", "open"}). taskd
show tells all of one task.
"attempt" is ATT's; "steps" a workflow's steps. --watch redraws whenever
a task file changes, until interrupted.

Paths under the home directory are shown with ~ in its place, only where
the home directory starts a path: with HOME=/root, /root/x is ~/x but
/srv/x/root/y stays as it is.

` + taskNames + `

Status fails when the root cannot be read, when --list names a list
that does not exist, and when the task named does not exist. A root that does not exist yet is not an error: it
has no lists.
`,
		run: runStatus,
	}, &command{
		name:  "ls",
		usage: "[--root DIR] [--config FILE] [--list ID]... [--all] [--json] [--watch] [--color auto|always|never] [TASK]",
		short: "status, one line per task",
		group: "Tasks",
		long: `
Ls is taskd status without the notes under each task: one line per task
(its id, state, step, attempt, age and subject) under each list's counts.
It takes status's flags and arguments, and --json prints the same as
status --json. 'taskd help status' explains the columns and the states.
`,
		run: func(ctx context.Context, inv *invocation) error { return statusCommand(ctx, inv, true) },
	})
}

func runStatus(ctx context.Context, inv *invocation) error { return statusCommand(ctx, inv, false) }

// statusCommand is taskd status, and with compact set taskd ls.
func statusCommand(ctx context.Context, inv *invocation, compact bool) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	configFile := fs.String("config", "", "the daemon's configuration file (its windows of hours)")
	var lists listFlags
	fs.Var(&lists, "list", "show only this list (repeatable)")
	all := fs.Bool("all", false, "show every task, not only taskd's")
	asJSON := fs.Bool("json", false, "print JSON")
	watch := fs.Bool("watch", false, "redraw when tasks change")
	colorFlag := fs.String("color", "auto", "auto, always or never")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return inv.usageErrorf("unexpected argument %q", fs.Arg(1))
	}
	r, err := daemon.ResolveRoot(*root, os.Getenv)
	if err != nil {
		return err
	}
	var one *taskRef
	if fs.NArg() == 1 {
		ref, err := parseTaskRef(r, fs.Arg(0))
		if err != nil {
			return err
		}
		r, one, lists = ref.root, &ref, listFlags{ref.list}
	}
	color, err := useColor(inv, *colorFlag)
	if err != nil {
		return err
	}
	show := func() error {
		snap, err := snapshot(r, lists, *all || one != nil)
		if err != nil {
			return err
		}
		if cfg, err := loadConfig(*root, *configFile, nil); err == nil {
			windowHolds(snap, cfg, clockOf(ctx).Now())
		}
		if one != nil {
			if snap, err = subtree(snap, one.id); err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(inv.stdout, snap[0])
			}
		}
		if *asJSON {
			enc := json.NewEncoder(inv.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(snap)
		}
		if *watch && color {
			fmt.Fprint(inv.stdout, "\x1b[H\x1b[2J")
		}
		home, _ := os.UserHomeDir()
		v := &statusView{root: r, home: home, daemon: daemonOf(r), lists: snap, refused: refusals(r, snap),
			now: clockOf(ctx).Now(), width: 80, color: color, compact: compact}
		v.render(inv.stdout)
		return nil
	}
	if err := show(); err != nil || !*watch {
		return err
	}
	return watchRoot(ctx, r, show)
}

// snapshot is status.Read with the tasks the daemon serving root holds.
func snapshot(root string, lists []string, all bool) ([]status.List, error) {
	return status.Read(root, lists, all, daemon.HeldTasks(root))
}

// subtree keeps of snap task id and the tasks below it (status.Subtree).
func subtree(snap []status.List, id string) ([]status.List, error) { return status.Subtree(snap, id) }

// refusals returns why a daemon refuses the root (key "") and each list
// (by id): the daemon's own rules, fsroot.CheckPrivate and
// area.CheckList.
func refusals(root string, lists []status.List) map[string]refusal {
	out := map[string]refusal{}
	check := func(key, path string, err error) {
		var u *fsroot.UnsafeError
		if !errors.As(err, &u) {
			return
		}
		r := refusal{kind: u.Kind}
		switch u.Kind {
		case fsroot.ErrWritable:
			r.mode = "?"
			if fi, err := os.Stat(path); err == nil {
				r.mode = fmt.Sprintf("%04o", fi.Mode().Perm())
			}
		case fsroot.ErrNotOwned:
			if fi, err := os.Stat(u.Path); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					r.uid = int(st.Uid)
				}
			}
		default:
			r.entry, _ = filepath.Rel(path, u.Path)
			r.what = u.Problem
		}
		out[key] = r
	}
	check("", root, fsroot.CheckPrivate(root))
	for _, l := range lists {
		path := filepath.Join(root, l.ID)
		check(l.ID, path, area.CheckList(path, false))
	}
	return out
}

// daemonOf says whether a daemon holds root's lock.
func daemonOf(root string) daemonState {
	held, pid, err := daemon.LockHolder(root)
	if err != nil {
		return daemonState{err: err.Error()}
	}
	return daemonState{running: held, pid: pid}
}

// watchRoot calls fn whenever something under root's lists changes, at
// most every 200ms, until ctx ends.
func watchRoot(ctx context.Context, root string, fn func() error) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	w.Add(root)
	entries, _ := fsroot.ReadDirectory(root)
	for _, e := range entries {
		if e.IsDir() {
			w.Add(filepath.Join(root, e.Name()))
		}
	}
	var pending <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if filepath.Dir(ev.Name) == root && ev.Has(fsnotify.Create) {
				w.Add(ev.Name)
			}
			if pending == nil {
				pending = time.After(200 * time.Millisecond)
			}
		case <-w.Errors:
		case <-pending:
			pending = nil
			if err := fn(); err != nil {
				return err
			}
		}
	}
}

// useColor says whether a command paints its output, as its --color flag
// (auto, always, never) says: auto paints on a terminal, unless NO_COLOR
// is set.
func useColor(inv *invocation, flag string) (bool, error) {
	switch flag {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto":
		return isTerminal(inv.stdout) && os.Getenv("NO_COLOR") == "", nil
	}
	return false, inv.usageErrorf("bad --color %q", flag)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
