package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/daemon/task"
)

// The subagent commands for agents: delegate, handoff,
// converge. Their arguments are those of the /delegate, /handoff and
// /converge prompt lines (daemon/prompt parses them); taskd's own flags
// (--task, --json, --tolerance) come first.

func init() {
	register(
		&command{name: "child delegate", group: groupChild,
			usage: "[--task T] [--json] TASK --agent-type builder|tester|analyzer|retriever [--inherit-context] [--permission-mode plan|acceptEdits|bypassPermissions] [--timeout S] [--tools a,b]",
			short: "start a subagent: a child with an agent type and narrowed permissions",
			long: `
Child delegate starts a subagent of the current task at once and prints its id;
it does not wait for it. The subagent is a child task (in the parent's
parallel collection, like 'taskd child push --start') named <type>-<n>, with
metadata.taskd.agentType, permissionMode, tools, inheritContext and
timeout. Its agent is the agent type, which the configuration's "agents"
maps to a profile (an unmapped type runs the defaultAgent).

The agent type gives the default tools and permission mode (configurable
under "agentTypes"): builder Read, Edit, Write, Bash, Glob, Grep with
acceptEdits; tester Bash, Read, Glob, Grep with plan; analyzer Read, Grep,
Glob with plan; retriever WebFetch, WebSearch, Read with plan.

A subagent may narrow its parent's permissions, never widen them. Modes
order plan < default < acceptEdits < bypassPermissions; the parent's mode is
its metadata.taskd.permissionMode (none: default, Claude Code's own), its
tools metadata.taskd.tools (none: unrestricted). Without --permission-mode
the type's mode is used, lowered to the parent's; without --tools the
type's tools that the parent allows. An explicit mode or tool wider than the
parent's fails the subagent before anything runs: its task file is written
failed with the reason, SubagentError is logged, and this command exits
with status 1. bypassPermissions also needs metadata.taskd.allowBypass: true
on the parent, set by a person; every grant is logged.

--inherit-context gives the subagent the parent's /read files (as /read
lines before its task) and the parent's prompt as its system prompt, and
for a claude profile resumes the parent's last recorded Claude session as
a new session (--resume ID --fork-session).
--timeout (default 300s) is the subagent's own timeout. The events
SubagentSpawned, TranscriptEvent (subagent_start) and, when it starts,
SubagentActive are logged. When the parent's agent ends while subagents
still run, the parent waits and is resumed with their results, as with
'taskd child push'.
`,
			run: runDelegate},
		&command{name: "child handoff", group: groupChild,
			usage: "[--task T] [--json] ID [--transfer-control] [--timeout S] [--on-failure retry|abort|escalate]",
			short: "watch a subagent, or wait for it and act on its failure",
			long: `
Child handoff hands off to the current task's child ID (its id or name). The link
is recorded in the parent's metadata.taskd.handoffs (HandoffInitiated).

Monitor mode (the default) returns at once: the daemon mirrors the child's
events into the parent's event stream (TranscriptEvent with the parent's
id) and logs HandoffComplete and HandoffResolved when the child ends.
--on-failure does not apply in monitor mode: the parent observes, it does
not intervene.

--transfer-control waits until the child has ended (waking on file
events, no polling) and prints its result, or until --timeout (default
600s) passes: the child is then cancelled (SubagentTimeout) and counts as
failed. On failure, --on-failure (default escalate) decides:

	retry     run the child again and wait again, at most 2 times; then as
	          escalate
	abort     exit with status 1; when the current task's agent exits, the
	          task fails with the reason, whatever the agent reports
	escalate  exit with status 1; when the agent exits, the task becomes
	          needs_human (metadata.taskd.hitl kind handoff) with the options
	          retry (run the task again), continue (record the attempt as the
	          agent reported it), abort and leave

HandoffComplete is logged at each end of the child, HandoffResolved with
the outcome, the action and the child's artifacts when the handoff is over.
`,
			run: runHandoff},
		&command{name: "child converge", group: groupChild,
			usage: "[--task T] [--tolerance N|N%] ID ID... --strategy merge|vote|consensus|first_success [--conflict-resolution manual|auto_accept_latest|prefer_higher_confidence] [--output-format json|markdown|delta_batch]",
			short: "combine the results of children",
			long: `
Child converge waits until the named children (ids or names) have ended and
combines their persisted results (result.json: success, summary, answer,
confidence, output; "files" in the child's final JSON object lists the
files it changed). Strategies:

	merge          every result in order; conflicts: two children changed the
	               same file, or gave different values for a key of "answer"
	               (a JSON object answer has keys; any other is one value)
	vote           at least 3 children; the most common answer wins; a tie is
	               a conflict
	consensus      all children succeeded with agreeing answers (numbers
	               within --tolerance, else metadata.taskd.convergeTolerance:
	               a number, or a percentage such as 1%); otherwise a conflict
	first_success  the first child to succeed wins; converge returns as soon
	               as one has, cancels the others (recorded as cancelled) and
	               waits until they have stopped

Conflicts are resolved by --conflict-resolution: auto_accept_latest (the
child that finished last wins; the overridden results are logged),
prefer_higher_confidence (the highest "confidence"; a child without one
leaves the conflict to a person) or manual (the default). Conflicts left
for a person write no output: converge prints them as JSON, logs
ManualReviewRequired and exits with status 3, and when the agent exits the
task becomes needs_human (metadata.taskd.hitl kind converge, with the
conflicts); the person answers with the id of the child whose result wins
(or abort, or leave), and the task runs again: the same converge then
uses the answer.

The output goes to the current run folder: converged.json always, and
converged.md (--output-format markdown) or converged.jsonl (delta_batch: a
batch line, then one delta per accepted result); converge prints the file
of the requested format (json by default). Answers compare with blanks
collapsed and case ignored. Events: ConvergenceInitiated, a
TranscriptEvent per conflict detected and resolved, ConvergenceComplete
(conflict_count, resolution_count, output_size).
`,
			run: runConverge},
	)
}

// ownFlags takes taskd's flags from the start of args: --task T, --json and
// those in valued (which take a value). The rest is for the parser.
func ownFlags(args []string, valued ...string) (map[string]string, []string, error) {
	vals := map[string]string{}
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		name, v, hasV := strings.Cut(strings.TrimLeft(args[0], "-"), "=")
		switch {
		case name == "json":
			vals["json"] = "true"
		case name == "task" || slices.Contains(valued, name):
			if !hasV {
				if len(args) < 2 {
					return nil, nil, fmt.Errorf("--%s needs a value", name)
				}
				v, args = args[1], args[1:]
			}
			vals[name] = v
		default:
			return vals, args, nil
		}
		args = args[1:]
	}
	return vals, args, nil
}

// isHelp reports whether args ask for the manual.
func isHelp(inv *invocation) bool {
	for _, a := range inv.args {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprint(inv.stdout, manual(inv.cmd))
			return true
		}
	}
	return false
}

// runDirOf is the acting task's current run folder: $TASKD_RUN_DIR, or the
// one its file records.
func runDirOf(s *self) string {
	if d := os.Getenv("TASKD_RUN_DIR"); d != "" && os.Getenv("TASKD_TASK_FILE") == s.dir.File(s.id) {
		return d
	}
	t, err := s.dir.Read(s.id)
	if err != nil {
		return ""
	}
	if rel := task.RecordOf(t).RunDir; rel != "" {
		return filepath.Join(s.dir.Path(), rel)
	}
	return ""
}

func runDelegate(ctx context.Context, inv *invocation) error {
	if isHelp(inv) {
		return nil
	}
	own, args, err := ownFlags(inv.args)
	if err != nil {
		return inv.usageErrorf("%v", err)
	}
	req, err := prompt.ParseDelegateArgs(args)
	if err != nil {
		return inv.usageErrorf("%v", err)
	}
	s, err := findSelf(own["task"])
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(inv.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	child, err := subagent.Parent{Config: s.cfg, Dir: s.dir, ID: s.id}.Delegate(ctx, req, subagent.DelegateOptions{Log: log})
	if child != nil {
		if own["json"] != "" {
			m := child.Metadata.Object("taskd")
			name, _ := m.String("name")
			mode, _ := m.String("permissionMode")
			out := map[string]any{"id": child.ID, "name": name, "permissionMode": mode, "ok": err == nil}
			if err != nil {
				out["error"] = err.Error()
			}
			writeJSON(inv.stdout, out)
		} else {
			fmt.Fprintln(inv.stdout, child.ID)
		}
	}
	return err
}

func runHandoff(ctx context.Context, inv *invocation) error {
	if isHelp(inv) {
		return nil
	}
	own, args, err := ownFlags(inv.args)
	if err != nil {
		return inv.usageErrorf("%v", err)
	}
	req, err := prompt.ParseHandoffArgs(args)
	if err != nil {
		return inv.usageErrorf("%v", err)
	}
	s, err := findSelf(own["task"])
	if err != nil {
		return err
	}
	res, err := subagent.Parent{Config: s.cfg, Dir: s.dir, ID: s.id}.Handoff(ctx, runDirOf(s), req)
	if res != nil {
		switch {
		case own["json"] != "":
			writeJSON(inv.stdout, res)
		case res.Result != nil:
			fmt.Fprint(inv.stdout, messageText(*res.Result))
		default:
			fmt.Fprintf(inv.stdout, "handed off to %s (%s)\n", res.Child, res.Mode)
		}
	}
	return err
}

func runConverge(ctx context.Context, inv *invocation) error {
	if isHelp(inv) {
		return nil
	}
	own, args, err := ownFlags(inv.args, "tolerance")
	if err != nil {
		return inv.usageErrorf("%v", err)
	}
	req, err := prompt.ParseConvergeArgs(args)
	if err != nil {
		return inv.usageErrorf("%v", err)
	}
	s, err := findSelf(own["task"])
	if err != nil {
		return err
	}
	out, err := subagent.Parent{Config: s.cfg, Dir: s.dir, ID: s.id}.Converge(ctx, runDirOf(s), req, subagent.ConvergeOptions{Tolerance: own["tolerance"]})
	if out != nil {
		inv.stdout.Write(out.Content)
	}
	if errors.Is(err, subagent.ErrManualReview) {
		return &exitError{code: 3, err: err}
	}
	return err
}
