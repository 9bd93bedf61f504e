package calendar_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/calendar"
)

var utc = time.UTC

func at(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05 MST", s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestSchedule_Next(t *testing.T) {
	for _, tt := range []struct {
		expr, from, want string
	}{
		{"CRON_TZ=UTC 0 2 * * *", "2031-03-03 12:00:00 UTC", "2031-03-04 02:00:00 UTC"},
		{"CRON_TZ=UTC 0 2 * * *", "2031-03-03 01:59:59 UTC", "2031-03-03 02:00:00 UTC"},
		{"CRON_TZ=UTC */15 9-17 * * 1-5", "2031-03-07 17:50:00 UTC", "2031-03-10 09:00:00 UTC"}, // Friday evening: Monday
		{"CRON_TZ=Europe/Paris 0 2 * * *", "2031-03-03 12:00:00 UTC", "2031-03-04 01:00:00 UTC"},
		{"CRON_TZ=UTC @daily", "2031-03-03 12:00:00 UTC", "2031-03-04 00:00:00 UTC"},
		{"@every 2s", "2031-03-03 12:00:00 UTC", "2031-03-03 12:00:02 UTC"},
		{"CRON_TZ=UTC 30 0 2 * * *", "2031-03-03 12:00:00 UTC", "2031-03-04 02:00:30 UTC"}, // seconds first
	} {
		s, err := calendar.ParseSchedule(tt.expr)
		if err != nil {
			t.Fatalf("%q: %v", tt.expr, err)
		}
		if got := s.Next(at(tt.from)); !got.Equal(at(tt.want)) {
			t.Errorf("%q after %s = %s, want %s", tt.expr, tt.from, got.UTC(), tt.want)
		}
	}
}

// TestSchedule_DST: where the clocks change, a schedule of fixed hours
// makes one run a day as crontab(5) does: a time the change skips runs at
// the change (the library skipped the day), a time that comes twice runs
// the first time only (the library ran it twice); a schedule of every hour
// keeps its times. Without a zone, the times are those of the time given
// (the daemon's clock reads local time).
func TestSchedule_DST(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip(err)
	}
	local := func(s string) time.Time { return at(s).In(paris) }
	for _, tt := range []struct {
		expr string
		from time.Time
		want []string
	}{
		// Paris, 2026-03-29: 02:00 CET becomes 03:00 CEST (01:00 UTC).
		{"CRON_TZ=Europe/Paris 0 2 * * *", at("2026-03-28 12:00:00 UTC"), []string{"2026-03-29 01:00:00 UTC", "2026-03-30 00:00:00 UTC"}},
		{"CRON_TZ=Europe/Paris 30 2 * * *", at("2026-03-28 12:00:00 UTC"), []string{"2026-03-29 01:00:00 UTC", "2026-03-30 00:30:00 UTC"}},
		{"CRON_TZ=Europe/Paris 0 3 * * *", at("2026-03-28 12:00:00 UTC"), []string{"2026-03-29 01:00:00 UTC", "2026-03-30 01:00:00 UTC"}},
		{"0 2 * * *", local("2026-03-28 12:00:00 UTC"), []string{"2026-03-29 01:00:00 UTC", "2026-03-30 00:00:00 UTC"}},
		{"CRON_TZ=Europe/Paris 15 * * * *", at("2026-03-29 00:00:00 UTC"), []string{"2026-03-29 00:15:00 UTC", "2026-03-29 01:15:00 UTC"}},
		// New York, 2026-03-08: 02:00 EST becomes 03:00 EDT (07:00 UTC).
		{"CRON_TZ=America/New_York 0 2 * * *", at("2026-03-07 12:00:00 UTC"), []string{"2026-03-08 07:00:00 UTC", "2026-03-09 06:00:00 UTC"}},
		// Paris, 2026-10-25: 03:00 CEST becomes 02:00 CET (01:00 UTC).
		{"CRON_TZ=Europe/Paris 0 2 * * *", at("2026-10-24 12:00:00 UTC"), []string{"2026-10-25 00:00:00 UTC", "2026-10-26 01:00:00 UTC"}},
		{"CRON_TZ=Europe/Paris 30 2 * * *", at("2026-10-25 00:45:00 UTC"), []string{"2026-10-26 01:30:00 UTC"}},
		{"0 2 * * *", local("2026-10-24 12:00:00 UTC"), []string{"2026-10-25 00:00:00 UTC", "2026-10-26 01:00:00 UTC"}},
		{"CRON_TZ=Europe/Paris 0 * * * *", at("2026-10-24 23:30:00 UTC"), []string{"2026-10-25 00:00:00 UTC", "2026-10-25 01:00:00 UTC", "2026-10-25 02:00:00 UTC"}},
		{"CRON_TZ=UTC 0 2 * * *", at("2026-03-28 12:00:00 UTC"), []string{"2026-03-29 02:00:00 UTC"}},
	} {
		s, err := calendar.ParseSchedule(tt.expr)
		if err != nil {
			t.Fatalf("%q: %v", tt.expr, err)
		}
		var got []string
		for from := tt.from; len(got) < len(tt.want); {
			from = s.Next(from)
			got = append(got, from.UTC().Format("2006-01-02 15:04:05 MST"))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q after %s = %v, want %v", tt.expr, tt.from.UTC(), got, tt.want)
		}
	}
}

func TestSchedule_Missed(t *testing.T) {
	s, _ := calendar.ParseSchedule("@every 2s")
	from := at("2031-03-03 12:00:08 UTC")
	for _, tt := range []struct {
		now  string
		want int
	}{{"2031-03-03 12:00:08 UTC", 0}, {"2031-03-03 12:00:09 UTC", 0}, {"2031-03-03 12:00:16 UTC", 4}} {
		if got := s.Missed(from, at(tt.now), 1000); got != tt.want {
			t.Errorf("missed from +8s to %s = %d, want %d", tt.now, got, tt.want)
		}
	}
	every, _ := calendar.ParseSchedule("@every 1s")
	if got := every.Missed(from, from.Add(365*24*time.Hour), 100); got != 100 {
		t.Errorf("a year of seconds counted %d, want the limit 100", got)
	}
}

// TestSchedule_Hostile: what no schedule is, each refused with a message
// and never a panic of the parser's.
func TestSchedule_Hostile(t *testing.T) {
	for _, tt := range []struct{ expr, want string }{
		{"", "empty"},
		{"   ", "empty"},
		{"CRON_TZ=UTC", "names a time zone and no times"},
		{"TZ=", "names a time zone and no times"},
		{"TZ= 0 2 * * *", "is not a zone name"},
		{"CRON_TZ=../../etc/passwd 0 2 * * *", "is not a zone name"},
		{"CRON_TZ=/etc/localtime 0 2 * * *", "is not a zone name"},
		{"CRON_TZ=Mars/Olympus 0 2 * * *", "is not known"},
		{"0 2 * *", "not a cron expression"},
		{"*/0 * * * *", "not a cron expression"},
		{"99 * * * *", "not a cron expression"},
		{"1-1000000 * * * *", "not a cron expression"},
		{"@every -5s x", "not a cron expression"},
		{"@fortnightly", "not a cron expression"},
		{"@every -5m", "at least one"},
		{"@every 0s", "at least one"},
		{"@every 1ms", "at least one"},
		{"@every 1.5s", "whole number of seconds"},
		{"CRON_TZ=UTC @every -1h", "at least one"},
		{"0 2 * * * * * *", "not a cron expression"},
		{"0 2 * * *\n0 3 * * *", "control characters"},
		{"0 2 * * \x00", "control characters"},
		{strings.Repeat("1,", 200) + "1 * * * *", "at most 256"},
		{"\xff\xfe * * * *", "control characters"},
	} {
		s, err := calendar.ParseSchedule(tt.expr)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseSchedule(%q) = %v, %v; want an error saying %q", tt.expr, s, err, tt.want)
		}
	}
	// An expression with no time in five years is accepted, and has none.
	s, err := calendar.ParseSchedule("0 0 30 2 *")
	if err != nil {
		t.Fatal(err)
	}
	if next := s.Next(at("2031-03-03 12:00:00 UTC")); !next.IsZero() {
		t.Errorf("February 30th comes at %s", next)
	}
}

func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{"0 2 * * *", "CRON_TZ=UTC @every 1h", "TZ=", "*/5 1-3 * JAN-MAR MON"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := calendar.ParseSchedule(expr)
		if err == nil {
			s.Next(at("2031-03-03 12:00:00 UTC"))
		}
	})
}

func TestWindows_At(t *testing.T) {
	ws, err := calendar.ParseWindows([]string{"22:00-07:00 UTC"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		now         string
		open        bool
		start, next string
	}{
		{"2031-03-03 12:00:00 UTC", false, "", "2031-03-03 22:00:00 UTC"},
		{"2031-03-03 21:59:59 UTC", false, "", "2031-03-03 22:00:00 UTC"},
		{"2031-03-03 22:00:00 UTC", true, "2031-03-03 22:00:00 UTC", "2031-03-04 07:00:00 UTC"},
		{"2031-03-04 06:59:59 UTC", true, "2031-03-03 22:00:00 UTC", "2031-03-04 07:00:00 UTC"},
		{"2031-03-04 07:00:00 UTC", false, "", "2031-03-04 22:00:00 UTC"},
	} {
		open, start, next := ws.At(at(tt.now))
		if open != tt.open || (tt.start != "" && !start.Equal(at(tt.start))) || !next.Equal(at(tt.next)) {
			t.Errorf("at %s: open %v from %s, next %s; want %v from %s, next %s", tt.now, open, start, next, tt.open, tt.start, tt.next)
		}
	}
	if open, _, _ := calendar.Windows(nil).At(at("2031-03-03 12:00:00 UTC")); !open {
		t.Errorf("no windows is not always open")
	}
	day, _ := calendar.ParseWindows([]string{"00:00-00:00 UTC"})
	if open, _, _ := day.At(at("2031-03-03 23:59:59 UTC")); !open {
		t.Errorf("a window of the whole day is closed before midnight")
	}
}

// TestWindows_DST: a window of local hours in a zone that changes its
// clocks keeps its hours: Europe/Paris moves from UTC+1 to UTC+2 on the
// last Sunday of March 2031 (the 30th).
func TestWindows_DST(t *testing.T) {
	ws, err := calendar.ParseWindows([]string{"22:00-07:00 Europe/Paris"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, next := ws.At(at("2031-03-30 12:00:00 UTC"))
	if want := at("2031-03-30 20:00:00 UTC"); !next.Equal(want) {
		t.Errorf("after the change the window opens at %s, want %s", next.UTC(), want)
	}
	_, _, next = ws.At(at("2031-03-29 12:00:00 UTC"))
	if want := at("2031-03-29 21:00:00 UTC"); !next.Equal(want) {
		t.Errorf("before the change the window opens at %s, want %s", next.UTC(), want)
	}
}

func TestWindows_Period(t *testing.T) {
	ws, _ := calendar.ParseWindows([]string{"22:00-07:00 UTC"})
	start, resume, ok := ws.Period(at("2031-03-04 03:00:00 UTC"))
	if !ok || !start.Equal(at("2031-03-03 22:00:00 UTC")) || !resume.Equal(at("2031-03-04 22:00:00 UTC")) {
		t.Errorf("period at 03:00: %s to %s, %v", start, resume, ok)
	}
	if _, _, ok := ws.Period(at("2031-03-04 12:00:00 UTC")); ok {
		t.Errorf("a period at noon, outside the window")
	}
	start, resume, ok = calendar.Windows(nil).Period(time.Date(2031, 3, 4, 15, 0, 0, 0, utc))
	if !ok || !start.Equal(at("2031-03-04 00:00:00 UTC")) || !resume.Equal(at("2031-03-05 00:00:00 UTC")) {
		t.Errorf("a day's period: %s to %s", start, resume)
	}
}

func TestWindows_Hostile(t *testing.T) {
	for _, tt := range []struct{ w, want string }{
		{"22-07", "not a time"},
		{"2200-0700", "not a time"},
		{"22:00", "no -"},
		{"25:00-07:00", "not a time"},
		{"22:60-07:00", "not a time"},
		{"24:01-07:00", "not a time"},
		{"-1:00-07:00", "not a time"},
		{"22:00-07:00 ../../etc/passwd", "is not a zone name"},
		{"22:00-07:00 /etc/localtime", "is not a zone name"},
		{"22:00-07:00 Nowhere/Atall", "is not known"},
		{"22:00-07:00 Europe/Paris\x00", "is not a zone name"},
	} {
		if _, err := calendar.ParseWindow(tt.w); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseWindow(%q) = %v; want an error saying %q", tt.w, err, tt.want)
		}
	}
	if _, err := calendar.ParseWindows(make([]string, 49)); err == nil {
		t.Errorf("49 windows accepted")
	}
}
