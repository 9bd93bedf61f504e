package status

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/task"
)

// This file holds the words every view of tasks shows (taskd status,
// taskd show, taskd ui) besides a task's state (StateWord): its subject,
// ages, times to come, counts of tokens, and the colour a state is
// painted in.

// StateColors are the ANSI colours (SGR parameters) a state word is
// painted in on a terminal that shows colour.
var StateColors = map[string]string{
	"succeeded": "32", "failed": "31", "timed_out": "31", "cancelled": "90",
	"running": "34", "starting": "34", "waiting": "36", "needs_human": "33;1", "retrying": "33", "paused": "33",
	"rejected": "31;1", "blocked": "90", "stopped": "35", "queued": "90",
	"held": "33;1",
}

// Subject is task t's subject without the "#<id> " that flow's
// write-through puts in front (a view shows the id apart); a fork
// branch's "#<parent>/<branch> " becomes "<branch>: ".
func Subject(t *Task) string {
	s := t.Subject
	if rest, ok := strings.CutPrefix(s, "#"+t.ID+" "); ok {
		return rest
	}
	if t.Parent != "" {
		if rest, ok := strings.CutPrefix(s, "#"+t.Parent+"/"); ok {
			if branch, desc, ok := strings.Cut(rest, " "); ok {
				return branch + ": " + desc
			}
			return rest
		}
	}
	return s
}

// Age says briefly how long ago since was, at now: 5s, 3m, 2h, 4d; ""
// for a zero since.
func Age(now, since time.Time) string {
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

// Tokens says a count of tokens briefly: 950, 12.3k, 1.2M.
func Tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// When says a time to come, in now's time zone: 20:00 today, "Mon 20:00"
// within a week, "Mar 20 20:00" after; "now" once it has passed.
func When(now, at time.Time) string {
	if at.IsZero() || !at.After(now) {
		return "now"
	}
	at = at.In(now.Location())
	y, m, d := now.Date()
	ay, am, ad := at.Date()
	switch {
	case y == ay && m == am && d == ad:
		return at.Format("15:04")
	case at.Sub(now) < 6*24*time.Hour:
		return at.Format("Mon 15:04")
	}
	return at.Format("Jan 2 15:04")
}

// StateOrder orders the counts of a list's tasks by state (StateCounts).
var StateOrder = []string{"held", "needs_human", "failed", "timed_out", "stopped", "rejected", "retrying", "paused",
	"running", "starting", "waiting", "queued", "blocked", "pending", "cancelled", "succeeded", "completed", "in_progress"}

// StateCounts counts tasks by their state words: "2 running", "1
// needs_human", in StateOrder, states it does not know last.
func StateCounts(tasks []Task) []string {
	counts := map[string]int{}
	for i := range tasks {
		counts[StateWord(&tasks[i])]++
	}
	var parts []string
	for _, s := range StateOrder {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
			delete(counts, s)
		}
	}
	for _, s := range slices.Sorted(maps.Keys(counts)) { // states this version does not know
		parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
	}
	return parts
}

// WaitsWords says what a waiting task waits for: "2 of 3 children: b (4),
// c (5)", or the task it handed work to. names gives a task's name by id.
func WaitsWords(w *Waits, names map[string]string) string {
	var ids []string
	for _, id := range w.Open {
		if n := names[id]; n != "" && n != id {
			ids = append(ids, n+" ("+id+")")
		} else {
			ids = append(ids, id)
		}
	}
	what := map[string][2]string{
		"children": {"child", "children"},
		"handoff":  {"task it handed work to", "tasks it handed work to"},
		"converge": {"child to converge", "children to converge"},
	}[w.Kind]
	if what[0] == "" {
		what = [2]string{"task", "tasks"}
	}
	if len(w.Open) == 0 {
		return fmt.Sprintf("its %d %s have ended; it resumes", w.Total, Plural(w.Total, what[0], what[1]))
	}
	if len(w.Open) == w.Total {
		return fmt.Sprintf("%d %s: %s", w.Total, Plural(w.Total, what[0], what[1]), strings.Join(ids, ", "))
	}
	return fmt.Sprintf("%d of %d %s: %s", len(w.Open), w.Total, what[1], strings.Join(ids, ", "))
}

// Plural is one or many, as n asks.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// StepCount says how many steps of a workflow task t has run, to follow
// its current step: " 2/…" while it goes on, " 3/3" once it has ended (no
// total is known before); "" for a task that is not a workflow's.
func StepCount(t *Task) string {
	switch {
	case t.Steps == 0:
		return ""
	case task.State(t.State).Ended():
		return fmt.Sprintf(" %d/%d", t.Steps, t.Steps)
	}
	return fmt.Sprintf(" %d/…", t.Steps)
}

// Dollars says a cost in US dollars: "$0.04", or to a hundredth of a
// cent below a cent ("$0.0003"), so that a cheap agent's cost is seen to
// move; "~" marks taskd's estimate.
func Dollars(usd float64, estimated bool) string {
	s := fmt.Sprintf("$%.2f", usd)
	if usd > 0 && usd < 0.01 {
		s = fmt.Sprintf("$%.4f", usd)
	}
	if estimated {
		s = "~" + s
	}
	return s
}

// PauseWords says which paused profile holds a task back, why and until
// when: "profile claude is paused until 20:00 (usage limit): You've hit
// your limit".
func PauseWords(now time.Time, p *Pause) string {
	s := "profile " + p.Profile + " is paused"
	if !p.Until.IsZero() {
		s += " until " + When(now, p.Until)
	}
	if p.Reason != "" {
		s += " (" + p.By + "): " + p.Reason
	}
	return s
}
