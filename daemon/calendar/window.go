package calendar

import (
	"fmt"
	"strings"
	"time"
)

// A Window is a span of hours of every day in which tasks may start:
// "22:00-07:00" (from 22:00 to 07:00 the next morning), "09:00-17:30",
// in the daemon's local time or, after a space, a zone of its own
// ("22:00-07:00 Europe/Paris"). It starts at its first time and ends just
// before its second; one whose times are equal lasts the whole day.
type Window struct {
	text       string
	start, end int // minutes after midnight
	loc        *time.Location
}

// Windows are the windows of one list or profile: tasks may start while
// any of them is open. None means always.
type Windows []Window

// maxWindows bounds a list of windows.
const maxWindows = 48

// ParseWindows reads windows written as ParseWindow reads them.
func ParseWindows(texts []string) (Windows, error) {
	if len(texts) > maxWindows {
		return nil, fmt.Errorf("%d windows; at most %d", len(texts), maxWindows)
	}
	var ws Windows
	for _, t := range texts {
		w, err := ParseWindow(t)
		if err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// ParseWindow reads "HH:MM-HH:MM", optionally followed by a space and a
// time zone's name.
func ParseWindow(text string) (Window, error) {
	w := Window{text: text, loc: time.Local}
	span, zone, hasZone := strings.Cut(strings.TrimSpace(text), " ")
	bad := func(why string) (Window, error) {
		return Window{}, fmt.Errorf("window %q: %s; write it like \"22:00-07:00\" (from 22:00 to 07:00 the next morning), optionally followed by a time zone such as \"22:00-07:00 Europe/Paris\"", text, why)
	}
	from, to, ok := strings.Cut(span, "-")
	if !ok {
		return bad("it has no - between its times")
	}
	var err error
	if w.start, err = clockTime(from); err != nil {
		return bad(err.Error())
	}
	if w.end, err = clockTime(to); err != nil {
		return bad(err.Error())
	}
	if hasZone {
		if w.loc, err = LoadZone(strings.TrimSpace(zone)); err != nil {
			return Window{}, fmt.Errorf("window %q: %w", text, err)
		}
	}
	return w, nil
}

// clockTime reads "HH:MM" (24 hours; "24:00" is midnight at the end of
// the day) as minutes after midnight.
func clockTime(s string) (int, error) {
	var h, m int
	if len(s) != 5 || s[2] != ':' {
		return 0, fmt.Errorf("%q is not a time such as 07:00", s)
	}
	if _, err := fmt.Sscanf(s, "%02d:%02d", &h, &m); err != nil || h > 24 || m > 59 || h == 24 && m > 0 || h < 0 || m < 0 {
		return 0, fmt.Errorf("%q is not a time such as 07:00", s)
	}
	return h*60 + m, nil
}

// String returns the window as written.
func (w Window) String() string { return w.text }

// occurrence returns the span of w that starts on the day of t (in w's
// zone) shifted by days.
func (w Window) occurrence(t time.Time, days int) (start, end time.Time) {
	t = t.In(w.loc)
	y, mo, d := t.Date()
	start = time.Date(y, mo, d+days, w.start/60, w.start%60, 0, 0, w.loc)
	endDay := d + days
	if w.end <= w.start {
		endDay++ // past midnight, or the whole day
	}
	end = time.Date(y, mo, endDay, w.end/60, w.end%60, 0, 0, w.loc)
	return start, end
}

// At says whether a window of ws is open at t. If one is, start is when
// the earliest open one started and next when the last open one closes;
// if none is, next is when the first opens (start is zero). No windows:
// always open, start and next zero.
func (ws Windows) At(t time.Time) (open bool, start, next time.Time) {
	for _, w := range ws {
		for days := -1; days <= 1; days++ {
			s, e := w.occurrence(t, days)
			if !t.Before(s) && t.Before(e) {
				if !open || s.Before(start) {
					start = s
				}
				if !open || e.After(next) {
					next = e
				}
				open = true
			}
		}
	}
	if open || len(ws) == 0 {
		return open || len(ws) == 0, start, next
	}
	for _, w := range ws {
		for days := 0; days <= 2; days++ {
			if s, _ := w.occurrence(t, days); s.After(t) && (next.IsZero() || s.Before(next)) {
				next = s
			}
		}
	}
	return false, time.Time{}, next
}

// Period returns the span t's spending counts in for a budget "per
// window": the window of ws open at t (from its start to its end), or,
// with no windows, the day of t in its location (midnight to midnight).
// ok is false when ws has windows and none is open at t. resume is when
// the next span begins: the next window's start, or the next midnight.
func (ws Windows) Period(t time.Time) (start, resume time.Time, ok bool) {
	if len(ws) == 0 {
		y, m, d := t.Date()
		start = time.Date(y, m, d, 0, 0, 0, 0, t.Location())
		return start, time.Date(y, m, d+1, 0, 0, 0, 0, t.Location()), true
	}
	open, start, end := ws.At(t)
	if !open {
		return time.Time{}, time.Time{}, false
	}
	_, _, resume = ws.At(end)
	if open, _, _ := ws.At(end); open {
		resume = end // windows that touch: the next one starts where this ends
	}
	return start, resume, true
}
