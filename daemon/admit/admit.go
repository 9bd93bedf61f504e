// Package admit decides whether a task that could run may start now, by
// what its list and its agent profile set besides the task's own file
// (docs/scheduling.md): the pauses a person set (taskd pause), the
// windows of hours in which they start tasks, and the budget of each
// window, spent by the agents started in it. The daemon's loop asks
// before it starts a task, and the task's slot asks again just before its
// agent starts, so an Admission is safe for concurrent use. It reads no
// clock: every question says when.
package admit

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/taskd/taskd/daemon/calendar"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/pausefile"
)

// A Hold says why a task may not start now, and when to ask again: when a
// window opens, or a window's budget is new (zero: when something else
// changes).
type Hold struct {
	Reason string
	Until  time.Time
}

// A scope is a list or a profile, with what it sets.
type scope struct {
	kind, name string // "list" or "profile"
	q          config.Queue
}

func (s scope) String() string { return s.kind + " " + s.name }

// A spendKey is a scope's spending in one period (a window, or a day).
type spendKey struct {
	scope  string
	period time.Time
}

// An Admission holds back the tasks whose list or profile does not admit
// them now.
type Admission struct {
	cfg *config.Config

	mu    sync.Mutex
	spent map[spendKey]float64
	// unrecorded counts, per scope with a budget, the agents that have
	// exited and whose cost is not counted yet: until it is, the scope's
	// budget is not known, and no agent of it starts.
	unrecorded map[string]int
	// pauses are the root's pause file's pauses of persons and budgets,
	// as last read (SetPauses); budgetPaused the budgets' pauses it has
	// held, and budgetLifted the budgets a person lifted (taskd resume)
	// for the rest of a window, by scope and the window's start.
	pauses       pausefile.Record
	budgetPaused map[string]time.Time
	budgetLifted map[string]time.Time
}

// New returns the Admission of cfg's lists and profiles.
func New(cfg *config.Config) *Admission {
	return &Admission{cfg: cfg, spent: map[spendKey]float64{}, unrecorded: map[string]int{},
		budgetPaused: map[string]time.Time{}, budgetLifted: map[string]time.Time{}}
}

// scopes are the list's and the profile's settings that bound anything.
func (a *Admission) scopes(list, profile string) []scope {
	var out []scope
	if q := a.cfg.ListQueue(list); q.Bounded() {
		out = append(out, scope{"list", list, q})
	}
	if p := a.cfg.Profiles[profile]; p != nil && p.Queue.Bounded() {
		out = append(out, scope{"profile", profile, p.Queue})
	}
	return out
}

// Bounded reports whether anything of list's or profile's may hold a
// task back.
func (a *Admission) Bounded(list, profile string) bool {
	return len(a.scopes(list, profile)) > 0
}

// Check says whether a task of list whose agent runs with profile ("" for
// a workflow, whose steps may run several) may start at now, and if not,
// why and until when.
func (a *Admission) Check(list, profile string, now time.Time) (Hold, bool) {
	var reasons []string
	var until time.Time
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, p, ok := a.pauses.Hold(list, profile, now); ok {
		return Hold{Reason: pausefile.Words(s, p) + "; " + resumeCommand(s), Until: p.Until}, true
	}
	for _, s := range a.scopes(list, profile) {
		if open, _, next := s.q.Windows.At(now); !open {
			reasons = append(reasons, fmt.Sprintf("%s starts tasks in its windows only (%s); the next opens %s", s, windowsText(s.q.Windows), When(next, now)))
			until = later(until, next)
			continue
		}
		if s.q.MaxCostUSDPerWindow <= 0 {
			continue
		}
		if a.unrecorded[s.String()] > 0 {
			reasons = append(reasons, fmt.Sprintf("%s waits for the cost of an attempt that has just ended to be counted toward its budget", s))
			continue
		}
		start, resume, _ := s.q.Windows.Period(now)
		if lifted, ok := a.budgetLifted[s.String()]; ok && lifted.Equal(start) {
			continue // a person lifted the budget's pause for this window
		}
		if spent := a.spent[spendKey{s.String(), start}]; spent >= s.q.MaxCostUSDPerWindow {
			reasons = append(reasons, fmt.Sprintf("%s has spent $%.2f of its $%.2f for this %s; it starts tasks again %s", s, spent, s.q.MaxCostUSDPerWindow, periodWord(s.q.Windows), When(resume, now)))
			until = later(until, resume)
		}
	}
	if len(reasons) == 0 {
		return Hold{}, false
	}
	return Hold{Reason: strings.Join(reasons, "; "), Until: until}, true
}

// A Spent is a budget per window that is spent: its scope, and when its
// next window starts.
type Spent struct {
	Scope  pausefile.Scope
	Spent  float64
	Budget float64
	Until  time.Time
}

// Spend records that an agent of a task of list, run with profile, that
// started at started spent usd, as of now: it counts toward the budget of
// the window (or day) it started in, if that is the current one. It
// returns the budgets it spent, each once a window.
func (a *Admission) Spend(list, profile string, started time.Time, usd float64, now time.Time) (spentOut []Spent) {
	if usd <= 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.scopes(list, profile) {
		if s.q.MaxCostUSDPerWindow <= 0 {
			continue
		}
		cur, _, ok := s.q.Windows.Period(now)
		at, _, atOK := s.q.Windows.Period(started)
		if !ok || !atOK || !at.Equal(cur) {
			continue // an earlier window's, or a start outside any
		}
		k := spendKey{s.String(), cur}
		for old := range a.spent {
			if old.scope == k.scope && !old.period.Equal(cur) {
				delete(a.spent, old) // a window that is over
			}
		}
		before := a.spent[k]
		a.spent[k] += usd
		if before < s.q.MaxCostUSDPerWindow && a.spent[k] >= s.q.MaxCostUSDPerWindow {
			_, resume, _ := s.q.Windows.Period(now)
			spentOut = append(spentOut, Spent{Scope: pausefile.Scope{Kind: s.kind, Name: s.name}, Spent: a.spent[k], Budget: s.q.MaxCostUSDPerWindow, Until: resume})
		}
	}
	return spentOut
}

// SetPauses makes the pauses of persons and budgets those of rec, the
// root's pause file as read at now. A budget's pause it held that rec no
// longer holds, before its end, was lifted by a person: the budget holds
// nothing more until its next window.
func (a *Admission) SetPauses(rec pausefile.Record, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pauses = rec
	holds := rec.Holds()
	for key, until := range a.budgetPaused {
		if !until.After(now) {
			delete(a.budgetPaused, key)
			continue
		}
		still := false
		for s, p := range holds {
			if s.String() == key && p.By == pausefile.ByBudget {
				still = true
			}
		}
		if !still {
			delete(a.budgetPaused, key)
			for _, sc := range a.scopesNamed(key) {
				if start, _, ok := sc.q.Windows.Period(now); ok {
					a.budgetLifted[key] = start
				}
			}
		}
	}
	for s, p := range holds {
		if p.By == pausefile.ByBudget && !p.Until.IsZero() {
			a.budgetPaused[s.String()] = p.Until
		}
	}
}

// scopesNamed returns the scope whose String is key, if it sets anything.
func (a *Admission) scopesNamed(key string) []scope {
	kind, name, _ := strings.Cut(key, " ")
	var q config.Queue
	if kind == "list" {
		q = a.cfg.ListQueue(name)
	} else if p := a.cfg.Profiles[name]; p != nil {
		q = p.Queue
	}
	if !q.Bounded() {
		return nil
	}
	return []scope{{kind, name, q}}
}

// resumeCommand is the command that lifts the pause of scope s.
func resumeCommand(s pausefile.Scope) string {
	switch s.Kind {
	case pausefile.All:
		return "taskd resume --all"
	case pausefile.Profile:
		return "taskd resume --profile " + s.Name
	}
	return "taskd resume " + s.Name
}

// Exited says an agent of a task of list, run with profile, has exited:
// until Recorded, its cost counts as unknown toward the budgets it counts
// in. It reports whether it counts in any.
func (a *Admission) Exited(list, profile string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	any := false
	for _, s := range a.scopes(list, profile) {
		if s.q.MaxCostUSDPerWindow > 0 {
			a.unrecorded[s.String()]++
			any = true
		}
	}
	return any
}

// Recorded says the end of an agent Exited reported is recorded (its
// cost, if it reported one, counted by Spend).
func (a *Admission) Recorded(list, profile string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.scopes(list, profile) {
		if k := s.String(); a.unrecorded[k] > 0 {
			if a.unrecorded[k]--; a.unrecorded[k] == 0 {
				delete(a.unrecorded, k)
			}
		}
	}
}

// Spent returns what scope kind ("list" or "profile") name has spent in
// its current window (or day) at now.
func (a *Admission) Spent(kind, name string, now time.Time) float64 {
	var q config.Queue
	if kind == "list" {
		q = a.cfg.ListQueue(name)
	} else if p := a.cfg.Profiles[name]; p != nil {
		q = p.Queue
	}
	cur, _, ok := q.Windows.Period(now)
	if !ok {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.spent[spendKey{kind + " " + name, cur}]
}

func windowsText(ws calendar.Windows) string {
	var s []string
	for _, w := range ws {
		s = append(s, w.String())
	}
	return strings.Join(s, ", ")
}

func periodWord(ws calendar.Windows) string {
	if len(ws) == 0 {
		return "day"
	}
	return "window"
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// When says a time to come for people: "at 22:00" today, "on Mar 4 at
// 07:00" later, in the zone of t.
func When(t, now time.Time) string {
	if t.IsZero() {
		return "when it is resumed"
	}
	y, m, d := t.Date()
	ny, nm, nd := now.In(t.Location()).Date()
	if y == ny && m == nm && d == nd {
		return "at " + t.Format("15:04")
	}
	return "on " + t.Format("Jan 2 at 15:04")
}
