package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
)

func init() {
	register(&command{
		name:  "show",
		usage: "[--root DIR] [-n LINES] [--json] [--color auto|always|never] TASK",
		short: "what happened to a task: outcome, summary, cost, branch, output",
		group: "Tasks",
		long: `
Show tells what happened to one task, in one place: how it ended (or
where it is), the agent's summary of what it did, why it needs you or
failed and what to run about it, the agent and how long it ran, what it
spent (turns, tokens, cost: the latest attempt's, and every attempt's
together when there were several), the branch its worktree is on with
what changed there, where it ran, its children with how each ended, the
run folder, and the last lines (-n, default 10) of its output: the
readable transcript of an agent that streams (the claude, codex and
opencode profiles), else its standard output, else its standard error.

	demo/7 · Fix the flaky login test
	state:    succeeded 5m ago, after 1 attempt
	summary:  The login test waited a fixed 2s; it now waits for the
	          page's ready event. All 41 tests pass.
	agent:    claude · ran 1m23s · 7 turns · 12.3k tokens · $0.04
	branch:   taskd/demo/7 from 6f1d2c3 · 3f2a1b9 · 2 files changed, +14 -3
	in:       ~/src/app
	run:      ~/.claude/tasks/demo/.taskd/runs/7/1

` + taskNames + `

--json prints the same as one JSON object: the task as 'taskd status
--json' shows it, and "file", "outcome" (the state word), "reason",
"agent", "attempts", "startedAt", "finishedAt", "last" and "total" (each
{"runs", "turns", "tokens", "costUsd", "costEstimated", "durationMs"}),
"childTasks" (each {"id", "name", "outcome", "summary", "error"}) and
"output" {"file", "lines", "cut"}.

It reads files only: it works whether or not a daemon runs. The output
fits 80 columns and is coloured only on a terminal. Show fails when the
task does not exist.
`,
		run: runShow,
	})
}

func runShow(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	rootFlag := fs.String("root", "", "root of task lists")
	lines := fs.Int("n", 10, "lines of output to show")
	asJSON := fs.Bool("json", false, "print JSON")
	colorFlag := fs.String("color", "auto", "auto, always or never")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return inv.usageErrorf("name one task")
	}
	color, err := useColor(inv, *colorFlag)
	if err != nil {
		return err
	}
	root, err := daemon.ResolveRoot(*rootFlag, os.Getenv)
	if err != nil {
		return err
	}
	ref, err := parseTaskRef(root, fs.Arg(0))
	if err != nil {
		return err
	}
	d, err := status.Show(ref.root, ref.list, ref.id, status.ShowOptions{Held: daemon.HeldTasks(ref.root), Lines: max(*lines, 0)})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(inv.stdout, d)
	}
	home, _ := os.UserHomeDir()
	v := &showView{d: d, home: home, now: time.Now(), width: 80, color: color}
	v.render(inv.stdout)
	return nil
}

// showView is what taskd show draws. Rendering it is pure: the same view
// gives the same text.
type showView struct {
	d     *status.Detail
	home  string    // shown as ~ in paths
	now   time.Time // ages are relative to it
	width int
	color bool
}

// showLabel is the width of the labels' column.
const showLabel = 10

// render writes the view to w.
func (v *showView) render(w io.Writer) {
	r := &renderer{v: &statusView{home: v.home, width: v.width, color: v.color}, w: w}
	d := v.d
	ref := clean(d.List + "/" + d.ID)
	r.line(r.paint("1", ref) + " · " + fit(subject(&d.Task), v.width-width(ref)-3))
	r.paintedLine("state:", d.Outcome, v.stateWords())
	if d.Summary != "" {
		r.labelled("summary:", d.Summary, "")
	}
	v.reason(r, ref)
	if line := v.agentLine(); line != "" {
		r.labelled("agent:", line, "")
	}
	if t := d.Total; t != nil && t.Runs > 1 {
		what := "attempts"
		if d.Workflow != "" {
			what = "steps"
		}
		r.labelled("", fmt.Sprintf("all %d %s: %s", t.Runs, what, usageWords(t, "")), "")
	}
	if ws := d.Worktree; ws != nil {
		r.labelled("branch:", branchWords(ws, d.Outcome), "")
		r.labelled("worktree:", r.v.path(ws.Path), "")
		if ws.Commit != "" {
			r.labelled("", "taskd diff "+ref+" shows the change; git merge "+ws.Branch+" takes it", "")
		}
	}
	switch {
	case d.Cwd != "":
		r.labelled("in:", r.v.path(d.Cwd), "")
	case d.CwdNote != "":
		r.labelled("in:", "~ (your home directory)", "")
	}
	if d.CwdNote != "" {
		r.labelled("note:", d.CwdNote, "33")
	}
	v.children(r)
	if d.Logs != "" {
		r.labelled("run:", r.v.path(d.Logs), "")
	}
	r.labelled("file:", r.v.path(d.File), "")
	v.output(r, ref)
}

// labelled writes text after label in the labels' column, wrapped to the
// width (at most 6 lines); the label is painted with code.
func (r *renderer) labelled(label, text, code string) {
	avail := r.v.width - showLabel
	lines := wrap(r.v.abbrev(clean(text)), avail, 6)
	for i, l := range lines {
		lab := strings.Repeat(" ", showLabel)
		if i == 0 && label != "" {
			lab = r.paint(code, label) + strings.Repeat(" ", showLabel-width(label))
		}
		r.line(strings.TrimRight(lab+l, " "))
	}
}

// paintedLine writes label, the word painted in its state's colour, and
// rest, cut to the width.
func (r *renderer) paintedLine(label, word, rest string) {
	avail := r.v.width - showLabel - width(word) - 1
	line := pad(label, showLabel) + r.paint(stateColor[word], fit(word, r.v.width-showLabel))
	if rest != "" && avail > 1 {
		line += " " + fit(r.v.abbrev(rest), avail)
	}
	r.line(strings.TrimRight(line, " "))
}

// stateWords says since when the task is in its state and after how many
// attempts: "5m ago, after 2 attempts", "for 3m, attempt 2", a
// workflow's step and the steps it has run.
func (v *showView) stateWords() string {
	d := v.d
	var parts []string
	ended := task.State(d.State).Ended()
	if since := age(v.now, d.Since); since != "" {
		if ended || d.State == string(task.NeedsHuman) || d.State == "" {
			parts = append(parts, since+" ago")
		} else {
			parts = append(parts, "for "+since)
		}
	}
	switch {
	case d.Workflow != "":
		w := "workflow " + d.Workflow
		if d.Step != "" {
			w += " at " + d.Step
		}
		if d.Steps > 0 {
			w += fmt.Sprintf(", %d %s run", d.Steps, plural(d.Steps, "step", "steps"))
		}
		parts = append(parts, w)
	case d.Attempts > 0 && ended:
		parts = append(parts, fmt.Sprintf("after %d %s", d.Attempts, plural(d.Attempts, "attempt", "attempts")))
	case d.Attempts > 0:
		parts = append(parts, fmt.Sprintf("attempt %d", d.Attempts))
	}
	return strings.Join(parts, ", ")
}

// reason writes why the task needs a person, failed, waits or is held,
// and the command that acts on it.
func (v *showView) reason(r *renderer, ref string) {
	d := v.d
	switch d.Outcome {
	case "needs_human":
		r.labelled("waiting:", firstNonEmpty(d.Reason, "a person's answer"), "33")
		answer := "taskd resolve " + ref + " ANSWER"
		if len(d.Options) > 0 {
			answer = "taskd resolve " + ref + " " + d.Options[0]
			if len(d.Options) > 1 {
				answer += " (or " + strings.Join(d.Options[1:], ", ") + ")"
			}
		}
		r.labelled("answer:", answer, "")
	case "failed", "timed_out", "stopped", "cancelled":
		if d.Reason != "" && d.Reason != "cancelled" {
			r.labelled("error:", d.Reason, "31")
		}
		r.labelled("retry:", "taskd retry "+ref, "")
	case "retrying":
		r.labelled("error:", d.Reason, "33")
	case "paused":
		r.labelled("paused:", "usage limit, resumes "+when(v.now, d.ResumesAt), "33")
		if d.Reason != "" {
			r.labelled("limit:", d.Reason, "")
		}
	case "held":
		r.labelled("held:", d.Reason, "33")
	case "rejected":
		r.labelled("rejected:", d.Reason, "31")
		if d.Fix != "" {
			r.labelled("fix:", d.Fix, "")
		}
	case "blocked":
		r.labelled("blocked:", strings.Join(d.BlockedBy, ", ")+" (must complete first)", "")
	case "waiting":
		if d.Waits != nil {
			names := map[string]string{}
			for _, k := range d.Kids {
				names[k.ID] = k.Name
			}
			r.labelled("waiting:", waitsWords(d.Waits, names), "36")
		}
	case "succeeded":
		if len(d.Options) > 0 {
			r.labelled("stopped:", d.WaitingFor, "33")
			r.labelled("answer:", "taskd resolve "+ref+" continue", "")
		}
	}
	if d.Dispatch != "" {
		r.labelled("", d.Dispatch, "33")
	}
}

// agentLine is the agent, how long its latest attempt ran and what it
// spent: "claude · ran 1m23s · 7 turns · 12.3k tokens · $0.04".
func (v *showView) agentLine() string {
	d := v.d
	var parts []string
	if d.Agent != "" {
		parts = append(parts, d.Agent)
	}
	if p := d.Progress; p != nil && d.State == string(task.Running) {
		parts = append(parts, fmt.Sprintf("turn %d", p.Turns))
		if p.LastTool != "" {
			parts = append(parts, p.LastTool)
		}
		parts = append(parts, tokens(p.Tokens)+" tokens", costWords(p.CostUSD, p.Estimated))
		return strings.Join(parts, " · ")
	}
	ran := "ran "
	if d.Workflow != "" {
		ran = "last step ran "
	}
	if u := d.Last; u != nil {
		if s := usageWords(u, ran); s != "" {
			parts = append(parts, s)
		}
	} else if d.CostUSD != nil {
		parts = append(parts, costWords(*d.CostUSD, false))
	}
	return strings.Join(parts, " · ")
}

// usageWords says what u spent: "ran 1m23s · 7 turns · 12.3k tokens ·
// $0.04"; ran prefixes the duration.
func usageWords(u *status.Usage, ran string) string {
	var parts []string
	if u.DurationMs > 0 {
		parts = append(parts, ran+span(time.Duration(u.DurationMs)*time.Millisecond))
	}
	if u.Turns > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", u.Turns, plural(u.Turns, "turn", "turns")))
	}
	if u.Tokens > 0 {
		parts = append(parts, tokens(u.Tokens)+" tokens")
	}
	if u.CostUSD != nil {
		parts = append(parts, costWords(*u.CostUSD, u.Estimated))
	}
	return strings.Join(parts, " · ")
}

// costWords renders US dollars (status.Dollars).
func costWords(usd float64, estimated bool) string { return status.Dollars(usd, estimated) }

// span renders a duration briefly: 850ms, 4.2s, 1m23s, 2h05m.
func span(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// branchWords says which branch a worktree is on and what changed there:
// "taskd/demo/7 from 6f1d2c3 · 0a1b2c3 · 2 files changed, +14 -3", or
// "· no changes" for a task that succeeded without any.
func branchWords(ws *status.Worktree, state string) string {
	s := ws.Branch
	if ws.Base != "" {
		s += " from " + shortCommit(ws.Base)
	}
	switch {
	case ws.Commit != "":
		s += fmt.Sprintf(" · %s · %d %s changed", shortCommit(ws.Commit), ws.FilesChanged, plural(ws.FilesChanged, "file", "files"))
		if ws.FilesChanged > 0 {
			s += fmt.Sprintf(", +%d -%d", ws.Insertions, ws.Deletions)
		}
	case state == string(task.Succeeded):
		s += " · no changes"
	}
	return s
}

func shortCommit(c string) string {
	if len(c) > 7 {
		return c[:7]
	}
	return c
}

// maxChildren is how many children show lists.
const maxChildren = 10

// children writes the task's children, one line each, with how each
// ended.
func (v *showView) children(r *renderer) {
	kids := v.d.Kids
	for i, k := range kids {
		if i == maxChildren {
			r.labelled("", fmt.Sprintf("+ %d more: taskd status %s/%s", len(kids)-i, v.d.List, v.d.ID), "")
			break
		}
		label := ""
		if i == 0 {
			label = "children:"
		}
		who := k.ID
		if k.Name != "" && k.Name != k.ID {
			who += " " + k.Name
		}
		// One line each: cut, not wrapped.
		who = fit(who, (v.width-showLabel)/2) + ": "
		line := pad(label, showLabel) + who + r.paint(stateColor[k.Outcome], fit(k.Outcome, colState))
		if what := firstNonEmpty(k.Error, k.Summary); what != "" {
			if avail := v.width - showLabel - width(who) - width(fit(k.Outcome, colState)) - 3; avail > 1 {
				line += " · " + fit(r.v.abbrev(what), avail)
			}
		}
		r.line(line)
	}
}

// output writes the last lines of the latest attempt's output.
func (v *showView) output(r *renderer, ref string) {
	o := v.d.Output
	if o == nil || len(o.Lines) == 0 {
		return
	}
	what, cmd := "transcript", "taskd logs "+ref
	switch {
	case strings.HasSuffix(o.File, "stdout.log"):
		what = "output"
	case strings.HasSuffix(o.File, "stderr.log"):
		what, cmd = "standard error (its output is empty)", "taskd logs --stderr "+ref
	}
	head := "Last lines of its " + what + ":"
	if o.Cut {
		head = fmt.Sprintf("Last %d lines of its %s (%s prints all):", len(o.Lines), what, cmd)
	}
	r.line("")
	for _, l := range wrap(head, v.width, 2) {
		r.line(r.paint("2", l))
	}
	for _, l := range o.Lines {
		r.line(strings.TrimRight("  "+fit(r.v.abbrev(strings.ReplaceAll(l, "\t", "    ")), v.width-2), " "))
	}
}
