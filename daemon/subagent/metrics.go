package subagent

import (
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
)

// Metrics summarises the subagent events of event logs (the subagent commands'
// metrics): spawn and success rates, durations by agent type, timeouts and
// retries, permission refusals and bypass grants, handoffs, and the
// conflict rate of convergences. It is computed from the logs alone, so it
// works on any directory, with or without a daemon.
type Metrics struct {
	From          time.Time `json:"from"` // the first and last event considered
	To            time.Time `json:"to"`
	Spawned       int       `json:"spawned"`
	SpawnsPerHour float64   `json:"spawnsPerHour"` // over From–To
	Refused       int       `json:"refused"`       // permission scope violations
	BypassGrants  int       `json:"bypassGrants"`
	Ended         int       `json:"ended"` // attempts of subagents that ended
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
	Succeeded     int     `json:"succeeded"`
	SuccessRate   float64 `json:"successRate"`
	AvgDurationMs float64 `json:"avgDurationMs"`

	totalMs int64
}

// HandoffMetric counts handoffs and how they were resolved.
type HandoffMetric struct {
	Initiated int            `json:"initiated"`
	Resolved  int            `json:"resolved"`
	ByAction  map[string]int `json:"byAction"` // none, retry… as resolved
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
			m.Spawned++
			typ(ev).Spawned++
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
				m.ended(ev, typ(ev))
			case trSubagentRetry:
				m.Retries++
			}
		case eventlog.HandoffInitiated:
			m.Handoffs.Initiated++
		case eventlog.HandoffResolved:
			m.Handoffs.Resolved++
			a, _ := ev.Data["action"].(string)
			m.Handoffs.ByAction[a]++
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

// ended counts the end of a subagent's attempt.
func (m *Metrics) ended(ev eventlog.Event, t *TypeMetric) {
	m.Ended++
	t.Ended++
	t.totalMs += int64(number(ev.Data["duration_ms"]))
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
