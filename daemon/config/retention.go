package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RetentionSpec is the "retention" object of the configuration file: how
// much of ended tasks each list keeps (docs/configuration.md).
//
//	"retention": {"maxAge": "30d", "keepRuns": 3, "eventsMaxMiB": 10, "eventsKeep": 3}
type RetentionSpec struct {
	// MaxAge: run folders and inboxes of ended tasks untouched for longer
	// are removed ("30d"; "off" keeps them).
	MaxAge string `json:"maxAge,omitempty"`
	// KeepRuns: the run folders an ended task keeps, newest first (3; 0
	// keeps every one younger than maxAge).
	KeepRuns *int `json:"keepRuns,omitempty"`
	// EventsMaxMiB: events.jsonl is rotated when it reaches this size (10;
	// 0 never rotates).
	EventsMaxMiB *int `json:"eventsMaxMiB,omitempty"`
	// EventsKeep: rotated event logs kept (3).
	EventsKeep *int `json:"eventsKeep,omitempty"`
	// SucceededTasks and FailedTasks: the files of taskd's tasks that
	// succeeded, or ended otherwise (failed, timed out, stopped,
	// cancelled), longer ago are removed with their run folders and
	// inboxes, unless a task that has not ended still needs them ("7d",
	// "30d"; "off" keeps them).
	SucceededTasks string `json:"succeededTasks,omitempty"`
	FailedTasks    string `json:"failedTasks,omitempty"`
}

// Retention is the retention policy the daemon applies to each list.
type Retention struct {
	MaxAge         time.Duration // 0: run folders and inboxes are kept
	KeepRuns       int           // 0: no limit but MaxAge
	EventsMaxBytes int64         // 0: events.jsonl is never rotated
	EventsKeep     int
	SucceededTasks time.Duration // 0: the files of succeeded tasks are kept
	FailedTasks    time.Duration // 0: the files of tasks that ended otherwise are kept
}

// The retention defaults.
const (
	DefaultMaxAge       = 30 * 24 * time.Hour
	DefaultKeepRuns     = 3
	DefaultEventsMaxMiB = 10
	DefaultEventsKeep   = 3

	DefaultSucceededTasks = 7 * 24 * time.Hour
	DefaultFailedTasks    = 30 * 24 * time.Hour
)

// ParseAge parses an age such as "30d", "12h" or "90m": a Go duration, or
// a whole number of days followed by d.
func ParseAge(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100*365 {
			return 0, fmt.Errorf("%q is not an age such as \"30d\" or \"12h\"", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not an age such as \"30d\" or \"12h\"", s)
	}
	return d, nil
}

func (r *RetentionSpec) validate() error {
	if r == nil {
		return nil
	}
	if r.MaxAge != "" && r.MaxAge != "off" {
		if d, err := ParseAge(r.MaxAge); err != nil {
			return fmt.Errorf("retention.maxAge: %w", err)
		} else if d == 0 {
			return fmt.Errorf("retention.maxAge is 0, which would remove every run folder of an ended task at once; use \"off\" to keep them")
		}
	}
	for _, a := range []struct{ name, v string }{{"succeededTasks", r.SucceededTasks}, {"failedTasks", r.FailedTasks}} {
		if a.v == "" || a.v == "off" {
			continue
		}
		if d, err := ParseAge(a.v); err != nil {
			return fmt.Errorf("retention.%s: %w", a.name, err)
		} else if d == 0 {
			return fmt.Errorf("retention.%s is 0, which would remove such a task's file the moment it ends; use \"off\" to keep them", a.name)
		}
	}
	for _, n := range []struct {
		name string
		v    *int
		max  int
	}{{"keepRuns", r.KeepRuns, 1 << 20}, {"eventsMaxMiB", r.EventsMaxMiB, 1 << 20}, {"eventsKeep", r.EventsKeep, 1000}} {
		if n.v != nil && (*n.v < 0 || *n.v > n.max) {
			return fmt.Errorf("retention.%s is %d; it must be between 0 and %d", n.name, *n.v, n.max)
		}
	}
	return nil
}

// retention is the policy r sets, defaults filled in.
func (r *RetentionSpec) retention() Retention {
	out := Retention{MaxAge: DefaultMaxAge, KeepRuns: DefaultKeepRuns,
		EventsMaxBytes: DefaultEventsMaxMiB << 20, EventsKeep: DefaultEventsKeep,
		SucceededTasks: DefaultSucceededTasks, FailedTasks: DefaultFailedTasks}
	if r == nil {
		return out
	}
	for _, a := range []struct {
		v   string
		out *time.Duration
	}{{r.SucceededTasks, &out.SucceededTasks}, {r.FailedTasks, &out.FailedTasks}} {
		switch a.v {
		case "":
		case "off":
			*a.out = 0
		default:
			*a.out, _ = ParseAge(a.v)
		}
	}
	switch r.MaxAge {
	case "":
	case "off":
		out.MaxAge = 0
	default:
		out.MaxAge, _ = ParseAge(r.MaxAge)
	}
	if r.KeepRuns != nil {
		out.KeepRuns = *r.KeepRuns
	}
	if r.EventsMaxMiB != nil {
		out.EventsMaxBytes = int64(*r.EventsMaxMiB) << 20
	}
	if r.EventsKeep != nil {
		out.EventsKeep = *r.EventsKeep
	}
	return out
}
