package daemon_test

import (
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/recur"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/clock"
)

// TestQueue_ScheduleAcrossDST: a schedule at 02:00 Paris time makes one
// run on each day the clocks change, on the daemon's clock: on the day
// 02:00 is skipped (2026-03-29) at 03:00, the change; on the day 02:00
// comes twice (2026-10-25) the first time only. Before, the spring day
// had no run and the autumn day two.
func TestQueue_ScheduleAcrossDST(t *testing.T) {
	t.Parallel()
	if _, err := time.LoadLocation("Europe/Paris"); err != nil {
		t.Skip(err)
	}
	utc := func(s string) time.Time {
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	clk := clock.NewFake(utc("2026-03-28T12:00:00Z"))
	h := startDaemonClock(t, clk, []string{"l"})
	h.drop("l", "1", execTask("nightly", "true", "taskd.schedule", `"CRON_TZ=Europe/Paris 0 2 * * *"`))
	next := func(what string, runs int, want string) recur.Record {
		t.Helper()
		rec := h.waitRecord("l", "1", what, func(r recur.Record) bool { return r.Runs == runs && r.Firing.IsZero() && !r.Next.IsZero() })
		if !rec.Next.Equal(utc(want)) {
			t.Fatalf("%s: next %s, want %s", what, rec.Next.UTC(), want)
		}
		if rec.LastRun != "" {
			h.waitState("l", rec.LastRun, task.Succeeded, 20*time.Second)
		}
		return rec
	}
	next("its first next time", 0, "2026-03-29T01:00:00Z") // 03:00 CEST: 02:00 is skipped
	clk.Set(utc("2026-03-29T01:00:00Z"))
	rec := next("the run of the spring day", 1, "2026-03-30T00:00:00Z")
	if !rec.Last.Equal(utc("2026-03-29T01:00:00Z")) {
		t.Errorf("the spring day's run was made for %s", rec.Last.UTC())
	}

	clk.Set(utc("2026-10-24T12:00:00Z")) // a catch-up run for the summer
	next("the catch-up run", 2, "2026-10-25T00:00:00Z")
	clk.Set(utc("2026-10-25T00:00:00Z")) // 02:00 CEST
	next("the run of the autumn day", 3, "2026-10-26T01:00:00Z")
	clk.Set(utc("2026-10-25T01:00:00Z")) // 02:00 CET, the second time
	h.settled("l", "c")
	if rec := recur.Of(h.read("l", "1")); rec.Runs != 3 {
		t.Errorf("02:00 made a run again when it came a second time: %+v", rec)
	}
}

// TestQueue_ScheduleClockSetBack: a daemon whose clock was two days ahead
// computed a daily schedule's next time two days ahead; once the clock is
// set right (back), the schedule runs at its next time on the clock as it
// now is, not two days later. Before, the runs of the two days were lost.
func TestQueue_ScheduleClockSetBack(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0.Add(48*time.Hour + 3*time.Hour)) // t0 is 12:00 UTC: 15:00 two days on
	h := startDaemonClock(t, clk, []string{"l"})
	h.drop("l", "1", execTask("nightly", "true", "taskd.schedule", `"CRON_TZ=UTC 0 2 * * *"`))
	ahead := t0.Add(3 * 24 * time.Hour).Truncate(24 * time.Hour).Add(2 * time.Hour)
	h.waitRecord("l", "1", "its next time on the clock ahead", func(r recur.Record) bool { return r.Next.Equal(ahead) })

	clk.Back(48 * time.Hour)
	h.settled("l", "c") // the loop looks again (in a daemon, at the latest at the safety rescan)
	want := t0.Add(24 * time.Hour).Truncate(24 * time.Hour).Add(2 * time.Hour)
	h.waitRecord("l", "1", "its next time on the clock set back", func(r recur.Record) bool { return r.Next.Equal(want) })
	clk.Set(want)
	rec := h.waitRecord("l", "1", "the run of the next day", func(r recur.Record) bool { return r.Runs == 1 })
	if !rec.Last.Equal(want) || rec.Missed != 0 {
		t.Errorf("after the clock was set back: %+v, want a run for %s", rec, want)
	}
	h.waitState("l", rec.LastRun, task.Succeeded, 20*time.Second)
}

// TestQueue_ScheduleWithNoTime: a schedule with no time (February 30th)
// makes no runs, and the daemon says so once and rests. Before, the loop
// computed its next time again and again, a job after another, at full
// CPU.
func TestQueue_ScheduleWithNoTime(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	h := startDaemonClock(t, clk, []string{"l"})
	h.drop("l", "1", execTask("never", "true", "taskd.schedule", `"0 0 30 2 *"`))
	const said = `msg="the schedule has no time in the next five years: it makes no runs" list=l task=1`
	h.waitFor("the daemon to say the schedule has no time", 20*time.Second, func() bool { return strings.Contains(h.logs.String(), said) })
	h.settled("l", "c")
	clk.Advance(time.Hour)
	h.settled("l", "c2")
	if n := strings.Count(h.logs.String(), said); n != 1 {
		t.Errorf("said %d times, want once (the schedule was decided on again and again)", n)
	}
	if runs := h.runsOf("l", "1"); len(runs) != 0 {
		t.Errorf("runs %v of a schedule with no time", runs)
	}
}
