package pausefile

import (
	"fmt"
	"time"
)

// Who sets a pause, besides a usage limit (ByLimit).
const (
	ByPerson = "taskd pause"       // a person paused it
	ByBudget = "budget per window" // its budget per window is spent, until the next window
)

// ended reports whether p has ended by itself at now.
func (p Pause) ended(now time.Time) bool {
	return !p.Until.IsZero() && !p.Until.After(now)
}

// prune leaves out the pauses that have ended at now.
func (r *Record) prune(now time.Time) {
	for _, m := range []map[string]Pause{r.Profiles, r.Lists, r.Held} {
		for k, p := range m {
			if p.ended(now) {
				delete(m, k)
			}
		}
	}
	if r.All != nil && r.All.ended(now) {
		r.All = nil
	}
}

// A Scope is what a person's or a budget's pause pauses: the whole root
// (Kind "all"), a list or an agent profile, by Name.
type Scope struct {
	Kind, Name string
}

// The kinds of Scope.
const (
	All     = "all"
	List    = "list"
	Profile = "profile"
)

func (s Scope) String() string {
	if s.Kind == All {
		return "everything"
	}
	return s.Kind + " " + s.Name
}

// Hold returns the pause, of a person's or a budget's, that holds a task
// of list whose agent runs with profile ("" for none known) at now: the
// whole root's first, then the list's, then the profile's.
func (r Record) Hold(list, profile string, now time.Time) (Scope, Pause, bool) {
	if r.All != nil && !r.All.ended(now) {
		return Scope{Kind: All}, *r.All, true
	}
	if p, ok := r.Lists[list]; ok && !p.ended(now) {
		return Scope{List, list}, p, true
	}
	if p, ok := r.Held[profile]; ok && profile != "" && !p.ended(now) {
		return Scope{Profile, profile}, p, true
	}
	return Scope{}, Pause{}, false
}

// Get returns the person's or budget's pause of scope s.
func (r Record) Get(s Scope) (Pause, bool) {
	switch s.Kind {
	case All:
		if r.All != nil {
			return *r.All, true
		}
		return Pause{}, false
	case List:
		p, ok := r.Lists[s.Name]
		return p, ok
	}
	p, ok := r.Held[s.Name]
	return p, ok
}

// Set records p as the pause of scope s.
func (r *Record) Set(s Scope, p Pause) {
	switch s.Kind {
	case All:
		r.All = &p
	case List:
		if r.Lists == nil {
			r.Lists = map[string]Pause{}
		}
		r.Lists[s.Name] = p
	default:
		if r.Held == nil {
			r.Held = map[string]Pause{}
		}
		r.Held[s.Name] = p
	}
}

// Lift removes the pause of scope s and reports whether there was one.
func (r *Record) Lift(s Scope) bool {
	_, ok := r.Get(s)
	switch s.Kind {
	case All:
		r.All = nil
	case List:
		delete(r.Lists, s.Name)
	default:
		delete(r.Held, s.Name)
	}
	return ok
}

// Holds lists the pauses of persons and budgets in r, by scope.
func (r Record) Holds() map[Scope]Pause {
	out := map[Scope]Pause{}
	if r.All != nil {
		out[Scope{Kind: All}] = *r.All
	}
	for k, p := range r.Lists {
		out[Scope{List, k}] = p
	}
	for k, p := range r.Held {
		out[Scope{Profile, k}] = p
	}
	return out
}

// Words says pause p of scope s for people: "list nightly is paused
// (taskd pause, since Mar 3 14:02)".
func Words(s Scope, p Pause) string {
	what := s.String() + " is paused"
	if s.Kind == All {
		what = "everything is paused"
	}
	since := ""
	if !p.Since.IsZero() {
		since = ", since " + p.Since.Local().Format("Jan 2 15:04")
	}
	if p.Reason != "" {
		return fmt.Sprintf("%s (%s%s)", what, p.Reason, since)
	}
	return fmt.Sprintf("%s (%s%s)", what, p.By, since)
}
