package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
)

func init() {
	register(&command{
		name:  "wait",
		usage: "[--root DIR] [--timeout D] [--json] LIST/ID...",
		short: "wait until tasks end; exit with how they ended",
		group: "Tasks",
		long: `
Wait waits until every task named has ended, printing a line as each one
does, and exits with their outcome: 0 when all succeeded, 1 when any
failed, was cancelled, timed out or was stopped (or does not exist or was
removed), 124 when --timeout passed first. A task no daemon will run ends
the wait at once, with the reason, as a failure: one the daemon refused
(taskd status shows why), a file it does not read, and a task of Claude
Code's own (not addressed to taskd) that is not completed. A task that
waits for a person keeps wait waiting; wait says so once on standard
error, with the command that answers it.

A line says how the task ended, with the agent's summary (its first line)
or the error, and what its latest attempt cost when the agent reported
it; taskd show tells the rest:

	demo/7 succeeded: The login test now waits for the ready event ($0.04)
	demo/8 failed: the agent failed (exit status 2); logs: …

With --json each line is instead a JSON object: {"task", "outcome",
"success", "summary", "error", "costUsd"}; "outcome" is the state, or
"completed" (a task not addressed to taskd), "missing", "rejected" or
"not_taskd" (a task of Claude Code's own, not completed: no daemon runs it).

` + taskNames + `

	id=$(taskd submit --agent exec 'make test' | xargs basename -s .json)
	taskd wait "$id" && echo green
`,
		run: runWait,
	})
}

// exitWaitTimeout is wait's status when its --timeout passes, as
// timeout(1)'s.
const exitWaitTimeout = 124

func runWait(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	rootFlag := fs.String("root", "", "root of task lists")
	timeout := fs.Duration("timeout", 0, "give up after this long (exit status 124)")
	asJSON := fs.Bool("json", false, "print each end as a JSON line")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return inv.usageErrorf("name at least one task")
	}
	root, err := daemon.ResolveRoot(*rootFlag, os.Getenv)
	if err != nil {
		return err
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	var refs []taskRef
	failed := false
	for _, a := range fs.Args() {
		ref, err := parseTaskRef(root, a)
		if err == nil {
			err = w.Add(filepath.Join(ref.root, ref.list))
			w.Add(area.RejectedDir(filepath.Join(ref.root, ref.list))) // its note, if it is refused
		}
		if err != nil {
			fmt.Fprintf(inv.stderr, "taskd wait: %s: %v\n", a, err)
			failed = true
			continue
		}
		refs = append(refs, ref)
	}
	warnNoDaemon(inv, root)
	told := map[taskRef]bool{}
	// A poll besides the events: a watch can lose events (overflow).
	poll := time.NewTicker(2 * time.Second)
	defer poll.Stop()
	for {
		var left []taskRef
		for _, ref := range refs {
			end, note := outcomeOf(ref)
			switch {
			case end != nil && *asJSON:
				line, _ := json.Marshal(end)
				fmt.Fprintf(inv.stdout, "%s\n", line)
				failed = failed || !end.Success
			case end != nil:
				fmt.Fprintf(inv.stdout, "%s %s\n", ref, end.words())
				failed = failed || !end.Success
			default:
				if note != "" && !told[ref] {
					fmt.Fprintf(inv.stderr, "taskd wait: %s %s\n", ref, note)
					told[ref] = true
				}
				left = append(left, ref)
			}
		}
		refs = left
		if len(refs) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			for _, ref := range refs {
				fmt.Fprintf(inv.stderr, "taskd wait: %s has not ended\n", ref)
			}
			return &exitError{code: exitWaitTimeout}
		case <-w.Events:
		case <-w.Errors:
		case <-poll.C:
		}
	}
	if failed {
		return &exitError{code: 1}
	}
	return nil
}

// A waitEnd is how a task that wait waited for ended: what its line
// says, and what --json prints.
type waitEnd struct {
	Task string `json:"task"` // LIST/ID
	// Outcome is its state (succeeded, failed, cancelled, timed_out,
	// stopped), completed for a task that is not taskd's, missing for
	// one that does not exist, rejected for one the daemon refused (or a
	// file it does not read), not_taskd for a task of Claude Code's own
	// that is not completed: no daemon runs it.
	Outcome string   `json:"outcome"`
	Success bool     `json:"success"`
	Summary string   `json:"summary,omitempty"` // the latest attempt's
	Error   string   `json:"error,omitempty"`
	CostUSD *float64 `json:"costUsd,omitempty"` // the latest attempt's
}

// words is the end's line after the task's name: "succeeded: the
// summary ($0.04)", "failed: the error"; the summary is cut to its first
// line and an error to 80 characters, both made safe for a terminal.
func (e *waitEnd) words() string {
	s, what := e.Outcome, e.Error
	switch e.Outcome {
	case "missing":
		return "does not exist (or was removed)"
	case "rejected":
		return "refused by the daemon: " + clean(e.Error)
	case "not_taskd":
		return "is not addressed to taskd (no owner \"taskd\", no metadata.taskd): it is Claude Code's own, and no daemon runs it"
	case string(task.Succeeded):
		what, _, _ = strings.Cut(strings.TrimSpace(e.Summary), "\n")
	default:
		what = firstLineOf(what)
	}
	if what = strings.TrimSpace(clean(what)); what != "" {
		s += ": " + what
	}
	if e.CostUSD != nil {
		s += " (" + costWords(*e.CostUSD, false) + ")"
	}
	return s
}

// outcomeOf reads task ref: how it ended (nil while it has not), or a
// note for the person waiting on why it does not go on by itself.
//
// A task no daemon will run ends the wait at once, as a failure with the
// reason: one the daemon refused (its note in .taskd/rejected), a file
// taskd does not read (a link, not a regular file, another user's), and a
// task not addressed to taskd (Claude Code's own), unless it is completed.
func outcomeOf(ref taskRef) (end *waitEnd, note string) {
	o := status.ReadOutcome(filepath.Join(ref.root, ref.list), ref.id)
	switch {
	case o.NeedsHuman:
		return nil, "needs a person: see taskd show " + ref.String() + ", answer with taskd resolve " + ref.String() + " ANSWER"
	case !o.Ended:
		return nil, ""
	}
	end = &waitEnd{Task: ref.String(), Outcome: o.State, Success: o.OK, Summary: o.Summary, CostUSD: o.CostUSD}
	if !o.OK {
		end.Error = o.Error
	}
	return end, ""
}

// warnNoDaemon says on standard error when no daemon serves root: the
// tasks written there wait until one does.
func warnNoDaemon(inv *invocation, root string) {
	if held, _, err := daemon.LockHolder(root); err == nil && !held {
		fmt.Fprintf(inv.stderr, "taskd %s: no daemon serves %s: tasks wait until one does (taskd start, or taskd run)\n", inv.cmd.name, root)
	}
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
