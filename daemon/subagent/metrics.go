package subagent

import (
	"slices"
	"sort"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
)

// Metrics summarises the subagent events of event logs (the subagent commands'
// metrics): spawn and success rates, durations by agent type, timeouts and
// retries, permission refusals and bypass grants, handoffs, and the
// conflict rate of convergences. It is computed from the logs alone, so it
// works on any directory, with or without a daemon.
//
// The counts add up: every spawned subagent has either ended or is running
// (Spawned = Ended + Running). A subagent is counted once, however many
// attempts it took: an attempt that a retry followed (a handoff's, or a
// person's) is a retry, not an end, and the subagent ends with its last
// attempt. A subagent refused by its permission scope when it was
// delegated never ran: it is refused, not spawned.
type Metrics struct {
	From          time.Time `json:"from"` // the first and last event considered
	To            time.Time `json:"to"`
	Spawned       int       `json:"spawned"`
	SpawnsPerHour float64   `json:"spawnsPerHour"` // over From–To
	Refused       int       `json:"refused"`       // permission scope violations
	BypassGrants  int       `json:"bypassGrants"`
	Ended         int       `json:"ended"`   // subagents whose last attempt ended
	Running       int       `json:"running"` // spawned subagents not ended yet (or retried, and not ended since)
	Succeeded     int       `json:"succeeded"`
	Failed        int       `json:"failed"`
	TimedOut      int       `json:"timedOut"`
	Cancelled     int       `json:"cancelled"`
	SuccessRate   float64   `json:"successRate"` // succeeded / ended
	// Timeouts counts SubagentTimeout events by source: "subagent" (its own
	// timeout) or "handoff" (a handoff's).
	Timeouts     map[string]int         `json:"timeouts"`
	Retries      int                    `json:"retries"`
	ByType       map[string]*TypeMetric `json:"byType"`
	Handoffs     HandoffMetric          `json:"handoffs"`
	Convergences ConvergeMetric         `json:"convergences"`
}

// TypeMetric is the part of Metrics for one agent type.
type TypeMetric struct {
	Spawned       int     `json:"spawned"`
	Ended         int     `json:"ended"`
	Running       int     `json:"running"`
	Succeeded     int     `json:"succeeded"`
	SuccessRate   float64 `json:"successRate"`
	AvgDurationMs float64 `json:"avgDurationMs"`

	totalMs int64
}

// HandoffMetric counts handoffs and how they were resolved. The counts
// add up: Initiated = Resolved + Running. A handoff counts once, however
// often it was decided on: one escalated to a person (Escalated counts
// them) runs until the person's answer resolves it, and is counted by
// that answer's action.
type HandoffMetric struct {
	Initiated int            `json:"initiated"`
	Resolved  int            `json:"resolved"`
	Running   int            `json:"running"` // waiting for the child, or for a person
	Escalated int            `json:"escalated"`
	ByAction  map[string]int `json:"byAction"` // of the resolved: none, abort, continue
}

// A handoffRun is what the events say of one handoff.
type handoffRun struct {
	key       string // list, parent and child
	resolved  bool
	escalated bool
	action    string
}

// handoffKey identifies the handoffs of one parent to one child.
func handoffKey(ev eventlog.Event) string {
	child, _ := ev.Data["subagent_id"].(string)
	return ev.List + "/" + ev.Task + "/" + child
}

// ConvergeMetric counts convergences and their conflicts.
type ConvergeMetric struct {
	Initiated     int     `json:"initiated"`
	Completed     int     `json:"completed"`
	WithConflicts int     `json:"withConflicts"`
	ConflictRate  float64 `json:"conflictRate"` // completed with conflicts / completed
	Conflicts     int     `json:"conflicts"`
	Resolutions   int     `json:"resolutions"`
	ManualReviews int     `json:"manualReviews"`
}

// ComputeMetrics summarises evs (any order; typically every list's log).
func ComputeMetrics(evs []eventlog.Event) *Metrics {
	m := &Metrics{Timeouts: map[string]int{}, ByType: map[string]*TypeMetric{}, Handoffs: HandoffMetric{ByAction: map[string]int{}}}
	typ := func(ev eventlog.Event) *TypeMetric {
		name, _ := ev.Data["agent_type"].(string)
		if name == "" {
			name = "unknown"
		}
		if m.ByType[name] == nil {
			m.ByType[name] = &TypeMetric{}
		}
		return m.ByType[name]
	}
	subs := map[string]*subagentRun{} // by list and task
	var order []string
	var handoffs []*handoffRun // in the order they were initiated
	run := func(ev eventlog.Event) *subagentRun {
		key := ev.List + "/" + ev.Task
		if subs[key] == nil {
			subs[key] = &subagentRun{}
			order = append(order, key)
		}
		return subs[key]
	}
	evs = slices.Clone(evs)
	sort.SliceStable(evs, func(i, k int) bool { return evs[i].TS.Before(evs[k].TS) })
	for _, ev := range evs {
		if m.From.IsZero() || ev.TS.Before(m.From) {
			m.From = ev.TS
		}
		if ev.TS.After(m.To) {
			m.To = ev.TS
		}
		if _, mirrored := ev.Data["mirror_of"]; mirrored {
			continue // a copy in a parent's stream
		}
		switch ev.Type {
		case eventlog.SubagentSpawned:
			if r := run(ev); !r.spawned {
				r.spawned, r.typ = true, typ(ev)
				m.Spawned++
				r.typ.Spawned++
			}
			if _, ok := ev.Data["bypass_allowed_by"]; ok {
				m.BypassGrants++
			}
		case eventlog.SubagentError:
			if ev.Data["error_kind"] == "permission" {
				m.Refused++
			}
		case eventlog.SubagentTimeout:
			src, _ := ev.Data["source"].(string)
			m.Timeouts[src]++
		case eventlog.TranscriptEvent:
			switch ev.Data["event_type"] {
			case trSubagentStop:
				r := run(ev)
				last := ev
				r.last, r.stopped = &last, true
				r.totalMs += int64(number(ev.Data["duration_ms"]))
			case trSubagentRetry:
				m.Retries++
				run(ev).stopped = false // its last end was not the end
			}
		case eventlog.HandoffInitiated:
			handoffs = append(handoffs, &handoffRun{key: handoffKey(ev)})
		case eventlog.HandoffResolved:
			// The first handoff of this parent to this child that is not
			// resolved; one whose start the logs do not hold is not counted.
			key := handoffKey(ev)
			if i := slices.IndexFunc(handoffs, func(h *handoffRun) bool { return h.key == key && !h.resolved }); i >= 0 {
				h := handoffs[i]
				h.action, _ = ev.Data["action"].(string)
				h.escalated = h.escalated || h.action == actEscalate
				h.resolved = h.action != actEscalate
			}
		case eventlog.ConvergenceInitiated:
			m.Convergences.Initiated++
		case eventlog.ManualReviewRequired:
			m.Convergences.ManualReviews++
		case eventlog.ConvergenceComplete:
			c := &m.Convergences
			c.Completed++
			n, r := number(ev.Data["conflict_count"]), number(ev.Data["resolution_count"])
			c.Conflicts += int(n)
			c.Resolutions += int(r)
			if n > 0 {
				c.WithConflicts++
			}
		}
	}
	for _, h := range handoffs {
		m.Handoffs.Initiated++
		if h.escalated {
			m.Handoffs.Escalated++
		}
		if !h.resolved {
			m.Handoffs.Running++
			continue
		}
		m.Handoffs.Resolved++
		m.Handoffs.ByAction[h.action]++
	}
	for _, key := range order {
		r := subs[key]
		if !r.spawned {
			continue // refused before it ran, or spawned before the logs begin
		}
		if !r.stopped {
			m.Running++
			r.typ.Running++
			continue
		}
		m.ended(*r.last, r.typ, r.totalMs)
	}
	if hours := m.To.Sub(m.From).Hours(); hours > 0 {
		m.SpawnsPerHour = float64(m.Spawned) / hours
	}
	m.SuccessRate = ratio(m.Succeeded, m.Ended)
	m.Convergences.ConflictRate = ratio(m.Convergences.WithConflicts, m.Convergences.Completed)
	for _, t := range m.ByType {
		t.SuccessRate = ratio(t.Succeeded, t.Ended)
		if t.Ended > 0 {
			t.AvgDurationMs = float64(t.totalMs) / float64(t.Ended)
		}
	}
	return m
}

// A subagentRun is what the events say of one subagent.
type subagentRun struct {
	spawned bool
	typ     *TypeMetric
	last    *eventlog.Event // its last subagent_stop
	stopped bool            // its last attempt ended, and no retry followed
	totalMs int64           // of all its attempts
}

// ended counts the end of a subagent: last is its last attempt's end,
// totalMs the time all its attempts took.
func (m *Metrics) ended(last eventlog.Event, t *TypeMetric, totalMs int64) {
	ev := last
	m.Ended++
	t.Ended++
	t.totalMs += totalMs
	switch ev.Data["outcome"] {
	case "success":
		m.Succeeded++
		t.Succeeded++
	case "timeout":
		m.TimedOut++
	case "cancelled":
		m.Cancelled++
	default:
		m.Failed++
	}
}

// number reads a JSON number of an event's data.
func number(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	}
	return 0
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
