// Package calendar is time as the queue reads it: schedules, the cron
// expressions at whose times a recurring task makes a run, and windows,
// the hours of the day in which tasks may start ("22:00-07:00", in local
// time or a named zone). Pure: every answer is for a time the caller
// gives; nothing here reads a clock.
package calendar

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/robfig/cron/v3"
)

// A Schedule is a parsed metadata.taskd.schedule.
type Schedule struct {
	expr string
	s    cron.Schedule
}

// maxExpr bounds an expression: a real one is a few dozen bytes.
const maxExpr = 256

// parser reads the five fields of crontab(5) with an optional leading
// field of seconds, and the descriptors (@daily, @hourly, @every 10m, …).
var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule reads a cron expression: "0 2 * * *" (02:00 every day),
// "*/15 9-17 * * 1-5", "@daily", "@every 2h", optionally with a leading
// field of seconds, and optionally after a time zone, "CRON_TZ=Europe/Paris
// 0 2 * * *" (else the daemon's local time). Errors say what is wrong.
func ParseSchedule(expr string) (*Schedule, error) {
	expr = strings.TrimSpace(expr)
	switch {
	case expr == "":
		return nil, errors.New(`the schedule is empty; write a cron expression such as "0 2 * * *" (02:00 every day) or "@every 1h"`)
	case len(expr) > maxExpr:
		return nil, fmt.Errorf("the schedule is %d bytes long; a cron expression is at most %d", len(expr), maxExpr)
	case !utf8.ValidString(expr) || strings.ContainsFunc(expr, func(r rune) bool { return r < ' ' && r != '\t' }):
		return nil, errors.New("the schedule holds control characters; write a cron expression such as \"0 2 * * *\"")
	}
	if zone, rest, ok := cutZone(expr); ok {
		if rest == "" {
			return nil, fmt.Errorf("the schedule %q names a time zone and no times; write it like \"CRON_TZ=Europe/Paris 0 2 * * *\"", expr)
		}
		if _, err := LoadZone(zone); err != nil {
			return nil, err
		}
	}
	if err := checkEvery(expr); err != nil {
		return nil, err
	}
	s, err := parse(expr)
	if err != nil {
		return nil, fmt.Errorf("the schedule %q is not a cron expression (%v); write it like \"0 2 * * *\" (minute hour day-of-month month day-of-week), \"@daily\" or \"@every 1h\"", expr, err)
	}
	return &Schedule{expr: expr, s: s}, nil
}

// checkEvery refuses an "@every" of less than a second or of a part of
// one: the library makes each an interval of whole seconds, at least one
// ("@every -5m" and "@every 1.5s" ran every second).
func checkEvery(expr string) error {
	times := expr
	if _, rest, ok := cutZone(expr); ok {
		times = rest
	}
	arg, ok := strings.CutPrefix(times, "@every ")
	if !ok {
		return nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(arg))
	switch {
	case err != nil:
		return nil // the parser says what is wrong
	case d < time.Second || d%time.Second != 0:
		return fmt.Errorf("the schedule %q is not a whole number of seconds, at least one; write it like \"@every 90s\" or \"@every 2h\"", expr)
	}
	return nil
}

// parse is the parser's Parse, with a panic of the library (it has some
// on malformed input) turned into an error.
func parse(expr string) (s cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("malformed: %v", r)
		}
	}()
	return parser.Parse(expr)
}

// cutZone splits "CRON_TZ=Zone rest" (or "TZ=Zone rest").
func cutZone(expr string) (zone, rest string, ok bool) {
	for _, p := range []string{"CRON_TZ=", "TZ="} {
		if after, found := strings.CutPrefix(expr, p); found {
			zone, rest, _ = strings.Cut(after, " ")
			return zone, strings.TrimSpace(rest), true
		}
	}
	return "", "", false
}

// LoadZone loads the time zone name ("Europe/Paris", "UTC", "Local") from
// the system's zone database, refusing names that are paths.
func LoadZone(name string) (*time.Location, error) {
	if name == "" || len(name) > 64 || strings.Contains(name, "..") || strings.HasPrefix(name, "/") || strings.ContainsAny(name, "\\\x00") {
		return nil, fmt.Errorf("time zone %q is not a zone name such as \"Europe/Paris\" or \"UTC\"", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("time zone %q is not known (%v); use a name of the zone database such as \"Europe/Paris\" or \"UTC\"", name, err)
	}
	return loc, nil
}

// String returns the expression as written.
func (s *Schedule) String() string { return s.expr }

// Next returns the schedule's first time after t, or the zero time if it
// has none in the next five years ("0 0 30 2 *").
//
// Where the clocks change, a schedule of fixed hours keeps to one run per
// day as crontab(5) does: a time that the change skips ("0 2 * * *" when
// 02:00 becomes 03:00) is run at the change, and a time that comes twice
// (when 03:00 becomes 02:00 again) is run the first time only. A schedule
// of every hour ("*/15 * * * *") keeps its times as they come.
func (s *Schedule) Next(t time.Time) time.Time {
	n := s.s.Next(t)
	spec, ok := s.s.(*cron.SpecSchedule)
	if !ok || n.IsZero() || spec.Hour&allHours == allHours {
		return n
	}
	loc := spec.Location
	if loc == time.Local {
		loc = t.Location() // as the library reads it
	}
	for x := t.In(loc); ; {
		_, change := x.ZoneBounds()
		if change.IsZero() || change.After(n) {
			return n
		}
		_, before := change.Add(-time.Nanosecond).Zone()
		_, after := change.Zone()
		switch d := time.Duration(after-before) * time.Second; {
		case d > 0 && change.After(t) && skipped(spec, change.In(time.FixedZone("", before)), d):
			return change.In(n.Location())
		case d < 0 && !n.Before(change) && n.Before(change.Add(-d)):
			// n's time of day came before the change too: run it once.
			return s.Next(change.Add(-d - time.Second))
		}
		x = change
	}
}

// allHours is the hour field of a schedule of every hour.
const allHours = 1<<24 - 1

// skipped reports whether the spec has a time of day among those a change
// of the clocks skips: the gap of length d from start, the change read on
// the clocks before it.
func skipped(spec *cron.SpecSchedule, start time.Time, d time.Duration) bool {
	wall := time.Date(start.Year(), start.Month(), start.Day(), start.Hour(), start.Minute(), start.Second(), 0, time.UTC)
	u := *spec
	u.Location = time.UTC
	first := u.Next(wall.Add(-time.Second))
	return !first.IsZero() && first.Before(wall.Add(d))
}

// Missed counts the schedule's times after from up to now, stopping at
// limit: how many times a schedule last due at from missed while nobody
// made its runs.
func (s *Schedule) Missed(from, now time.Time, limit int) int {
	n := 0
	for t := s.Next(from); !t.IsZero() && !t.After(now) && n < limit; t = s.Next(t) {
		n++
	}
	return n
}
