package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/calendar"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/clock"
	"github.com/taskd/taskd/taskfile"
)

// The commands read the time from the clock their context carries (the
// system's unless a test gives another): submit --in, the daemon taskd
// run starts, status's ages.

type clockKey struct{}

// withClock returns ctx carrying c.
func withClock(ctx context.Context, c clock.Clock) context.Context {
	return context.WithValue(ctx, clockKey{}, c)
}

// clockOf returns the clock ctx carries, or the system's.
func clockOf(ctx context.Context) clock.Clock {
	if c, ok := ctx.Value(clockKey{}).(clock.Clock); ok {
		return c
	}
	return clock.Real
}

// startTime reads when a task starts from --at and --in, as of now:
// --at is an RFC 3339 time ("2026-01-05T02:00:00+01:00"), a local date and
// time ("2026-01-05 02:00"), or a local time of day ("02:00": the next
// one); --in is a duration ("90s", "2h", "3d"). It returns the zero time
// when neither is given.
func startTime(at, in string, now time.Time) (time.Time, error) {
	switch {
	case at != "" && in != "":
		return time.Time{}, errors.New("give --at or --in, not both")
	case in != "":
		d, err := config.ParseAge(in)
		if err != nil {
			return time.Time{}, fmt.Errorf("--in: %q is not a duration such as 90s, 2h or 3d", in)
		}
		return now.Add(d), nil
	case at == "":
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, at); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02 15:04", at, now.Location()); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("15:04", at, now.Location()); err == nil && strings.Count(at, ":") == 1 {
		y, m, d := now.Date()
		next := time.Date(y, m, d, t.Hour(), t.Minute(), 0, 0, now.Location())
		if !next.After(now) {
			next = time.Date(y, m, d+1, t.Hour(), t.Minute(), 0, 0, now.Location())
		}
		return next, nil
	}
	return time.Time{}, fmt.Errorf("--at: %q is not a time such as 02:00, \"2026-01-05 02:00\" or 2026-01-05T02:00:00+01:00", at)
}

// queueFlags are what submit's flags say of when the task starts: its
// priority, its start (--at or --in), its schedule and whether its runs
// may overlap.
type queueFlags struct {
	priority         int
	at, in, schedule string
	overlap          bool
}

// set records q in metadata.taskd m: priority, notBefore, schedule.
func (q queueFlags) set(ctx context.Context, m *taskfile.Object) error {
	priority, at, in, schedule, overlap := q.priority, q.at, q.in, q.schedule, q.overlap
	if priority < task.MinPriority || priority > task.MaxPriority {
		return fmt.Errorf("--priority %d: it must be between %d and %d", priority, task.MinPriority, task.MaxPriority)
	}
	if priority != 0 {
		m.Set("priority", priority)
	}
	start, err := startTime(at, in, clockOf(ctx).Now())
	if err != nil {
		return err
	}
	if !start.IsZero() {
		m.Set("notBefore", task.Stamp(start))
	}
	if overlap && schedule == "" {
		return errors.New("--overlap applies to a schedule; add --schedule CRON")
	}
	if schedule != "" {
		if _, err := calendar.ParseSchedule(schedule); err != nil {
			return fmt.Errorf("--schedule: %w", err)
		}
		m.Set("schedule", schedule)
		if overlap {
			m.Set("overlap", true)
		}
	}
	return nil
}
