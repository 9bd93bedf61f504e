package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/taskd/taskd/daemon"
)

func init() {
	register(&command{
		name:  "status",
		usage: "[--root DIR] [--list ID]... [--all] [--json] [--watch] [--color auto|always|never]",
		short: "show tasks: state, step, attempt, age, as a tree",
		group: "Tasks",
		long: `
Status shows the tasks of every list (or of the --list ones): taskd's own
tasks, or with --all every task. Children are shown under their parent. For
each task: its id, its state (metadata.taskd.state, or pending, blocked,
rejected), its workflow step, the attempt number, how long ago it entered
that state, and its subject; a task waiting for a person also shows what it
waits for and the answers 'taskd resolve' accepts.

The output fits 80 columns and is coloured only on a terminal (--color
always or never overrides; NO_COLOR is honoured). --json prints the same
data as JSON for scripts. --watch redraws whenever a task file changes,
until interrupted.
`,
		run: runStatus,
	})
}

func runStatus(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	var lists listFlags
	fs.Var(&lists, "list", "show only this list (repeatable)")
	all := fs.Bool("all", false, "show every task, not only taskd's")
	asJSON := fs.Bool("json", false, "print JSON")
	watch := fs.Bool("watch", false, "redraw when tasks change")
	colorFlag := fs.String("color", "auto", "auto, always or never")
	if err := inv.parse(fs); err != nil {
		return err
	}
	r, err := daemon.ResolveRoot(*root, os.Getenv)
	if err != nil {
		return err
	}
	color := false
	switch *colorFlag {
	case "always":
		color = true
	case "never":
	case "auto":
		color = isTerminal(inv.stdout) && os.Getenv("NO_COLOR") == ""
	default:
		return inv.usageErrorf("bad --color %q", *colorFlag)
	}
	show := func() error {
		snap, err := daemon.Snapshot(r, lists, *all)
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(inv.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(snap)
		}
		if *watch && color {
			fmt.Fprint(inv.stdout, "\x1b[H\x1b[2J")
		}
		renderStatus(inv.stdout, snap, time.Now(), 80, color)
		return nil
	}
	if err := show(); err != nil || !*watch {
		return err
	}
	return watchRoot(ctx, r, show)
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
	entries, _ := os.ReadDir(root)
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

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// ANSI colours by state.
var stateColor = map[string]string{
	"succeeded": "32", "failed": "31", "timed_out": "31", "cancelled": "90",
	"running": "34", "waiting": "36", "needs_human": "33;1", "retrying": "33",
	"rejected": "31;1", "blocked": "90", "stopped": "35", "queued": "90",
}

// renderStatus writes the status table. Columns: ID (with the tree), STATE,
// STEP, ATT, AGE, SUBJECT, fitted to width.
func renderStatus(w io.Writer, lists []daemon.ListStatus, now time.Time, width int, color bool) {
	paint := func(code, s string) string {
		if !color || code == "" {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	if len(lists) == 0 {
		fmt.Fprintln(w, "no task lists")
		return
	}
	for i, l := range lists {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s  (%d %s)\n", paint("1", "list "+l.ID), len(l.Tasks), plural(len(l.Tasks), "task", "tasks"))
		if len(l.Tasks) == 0 {
			continue
		}
		fmt.Fprintf(w, "  %-10s %-11s %-14s %3s %5s  %s\n", "ID", "STATE", "STEP", "ATT", "AGE", "SUBJECT")
		byID := map[string]*daemon.TaskStatus{}
		for i := range l.Tasks {
			byID[l.Tasks[i].ID] = &l.Tasks[i]
		}
		var row func(t *daemon.TaskStatus, prefix, branch string)
		row = func(t *daemon.TaskStatus, prefix, branch string) {
			state := displayState(t)
			id := fit(prefix+branch+t.ID, 10)
			attempt := ""
			if t.Attempt > 0 {
				attempt = fmt.Sprint(t.Attempt)
			}
			subjectWidth := max(width-(2+10+1+11+1+14+1+3+1+5+2), 10)
			fmt.Fprintf(w, "  %-10s %s %-14s %3s %5s  %s\n", id,
				paint(stateColor[state], fmt.Sprintf("%-11s", fit(state, 11))),
				fit(t.Step, 14), attempt, age(now, t.Since), fit(t.Subject, subjectWidth))
			indent := strings.Repeat(" ", 2+10+1)
			note := func(label, text string) {
				fmt.Fprintf(w, "%s%s\n", indent, fit(label+text, width-len(indent)))
			}
			switch {
			case t.Rejected != "":
				note("rejected: ", t.Rejected)
			case state == "needs_human":
				note("waiting for: ", t.WaitingFor)
				note("answer with: ", "taskd resolve "+t.List+"/"+t.ID+" "+strings.Join(t.Options, "|"))
			case state == "blocked":
				note("blocked by: ", strings.Join(t.BlockedBy, ", "))
			case t.Error != "" && (state == "failed" || state == "timed_out" || state == "retrying" || state == "stopped"):
				note("error: ", t.Error)
			}
			kids := t.Children
			for k, c := range kids {
				ct := byID[c]
				if ct == nil {
					continue
				}
				next := prefix
				if branch == "├ " {
					next += "│ "
				} else if branch == "└ " {
					next += "  "
				}
				b := "├ "
				if k == len(kids)-1 {
					b = "└ "
				}
				row(ct, next, b)
			}
		}
		for i := range l.Tasks {
			t := &l.Tasks[i]
			if t.Parent != "" && byID[t.Parent] != nil {
				continue // shown under its parent
			}
			row(t, "", "")
		}
	}
}

// displayState is the word status shows for a task's state.
func displayState(t *daemon.TaskStatus) string {
	switch {
	case t.Rejected != "":
		return "rejected"
	case t.State != "":
		return t.State
	case !t.Taskd:
		return t.Status
	case t.Status == "completed":
		return "completed"
	case len(t.BlockedBy) > 0:
		return "blocked"
	}
	return "pending"
}

// fit truncates s to n columns (runes), marking the cut with "…".
func fit(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return string(r[:n])
	}
	return string(r[:n-1]) + "…"
}

// age renders a duration briefly: 5s, 3m, 2h, 4d.
func age(now, since time.Time) string {
	if since.IsZero() {
		return ""
	}
	d := now.Sub(since)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
