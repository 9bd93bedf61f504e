package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/internal/fsroot"
)

func init() {
	register(&command{
		name:  "metrics",
		usage: "[--root DIR] [--list ID]... [--json]",
		short: "subagent metrics from the event logs",
		group: "Tasks",
		long: `
Metrics reads the event logs (<list>/.taskd/events.jsonl) of every list
under the root, or of the lists named with --list, and reports on the
subagents (/delegate, taskd delegate): how many were spawned and how fast,
how many ended and how (success rate) and how many still run, the average
duration by agent type, timeouts (a subagent's own, or a handoff's) and
retries, permission
refusals and bypassPermissions grants, handoffs by the action that
resolved them, and convergences with their conflict rate (the share of
completed convergences that found a conflict). It reads only the logs: it
works on any directory, whether a daemon runs or not. Events mirrored
into a parent's stream are not counted twice.

The counts add up: spawned = ended + running, and for handoffs initiated
= resolved + running. A handoff counts once: one escalated to a person
runs until the answer resolves it, counted by the answer's action. A
subagent cancelled because its handoff's timeout passed ended timed out,
not cancelled. A subagent counts once
however many attempts it took: an attempt followed by a retry (a
handoff's, or a person's) counts as a retry, and the subagent ends with
its last attempt, whose outcome is the one counted. A subagent refused by
its permission scope when it was delegated never ran: it counts as
refused, not as spawned or ended.

--json prints the numbers as one JSON object. A root that cannot be read
is an error (exit status 1); a log with a line that does not parse is
reported on standard error and counted up to that line.
`,
		run: runMetrics,
	})
}

func runMetrics(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	var lists listFlags
	fs.Var(&lists, "list", "only this list (repeatable)")
	asJSON := fs.Bool("json", false, "print JSON")
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
	var evs []eventlog.Event
	entries, err := fsroot.ReadDirectory(r)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() || len(lists) > 0 && !slices.Contains(lists, e.Name()) {
			continue
		}
		got, err := eventlog.Read(filepath.Join(r, e.Name()))
		if err != nil {
			fmt.Fprintf(inv.stderr, "taskd metrics: %s: %v (using the events before it)\n", e.Name(), err)
		}
		evs = append(evs, got...)
	}
	m := subagent.ComputeMetrics(evs)
	if *asJSON {
		return writeJSON(inv.stdout, m)
	}
	printMetrics(inv.stdout, m)
	return nil
}

func printMetrics(w io.Writer, m *subagent.Metrics) {
	if m.Spawned == 0 && m.Ended == 0 && m.Convergences.Initiated == 0 && m.Refused == 0 {
		fmt.Fprintln(w, "no subagent events")
		return
	}
	pct := func(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }
	fmt.Fprintf(w, "subagents   %d spawned (%.1f/h), %d refused by permission scope, %d bypassPermissions grants\n",
		m.Spawned, m.SpawnsPerHour, m.Refused, m.BypassGrants)
	fmt.Fprintf(w, "ended       %d: %d succeeded, %d failed, %d timed out, %d cancelled; success rate %s; %d running\n",
		m.Ended, m.Succeeded, m.Failed, m.TimedOut, m.Cancelled, pct(m.SuccessRate), m.Running)
	fmt.Fprintf(w, "timeouts    %d own, %d handoff; retries %d\n", m.Timeouts["subagent"], m.Timeouts["handoff"], m.Retries)
	for _, t := range slices.Sorted(maps.Keys(m.ByType)) {
		tm := m.ByType[t]
		fmt.Fprintf(w, "  %-10s %d spawned, %d ended, success %s, average %.1fs\n", t, tm.Spawned, tm.Ended, pct(tm.SuccessRate), tm.AvgDurationMs/1000)
	}
	var actions []string
	for a, n := range m.Handoffs.ByAction {
		actions = append(actions, fmt.Sprintf("%s %d", a, n))
	}
	slices.Sort(actions)
	fmt.Fprintf(w, "handoffs    %d initiated, %d resolved (%s), %d running; %d escalated to a person\n",
		m.Handoffs.Initiated, m.Handoffs.Resolved, strings.Join(actions, ", "), m.Handoffs.Running, m.Handoffs.Escalated)
	c := m.Convergences
	fmt.Fprintf(w, "converge    %d initiated, %d completed, %d with conflicts (conflict rate %s), %d conflicts, %d resolutions, %d manual reviews\n",
		c.Initiated, c.Completed, c.WithConflicts, pct(c.ConflictRate), c.Conflicts, c.Resolutions, c.ManualReviews)
}
