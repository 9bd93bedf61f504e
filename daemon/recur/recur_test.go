package recur_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/calendar"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/recur"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

var t0 = time.Date(2031, 3, 3, 12, 0, 0, 0, time.UTC)

// schedule makes a list with schedule 1 (every 2 seconds) whose file
// records rec, and returns its directory.
func schedule(t *testing.T, rec recur.Record) (*config.Config, *taskfile.Dir) {
	t.Helper()
	root := t.TempDir()
	path := filepath.Join(root, "l")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	r, _ := json.Marshal(rec)
	body := `{"id": "1", "subject": "every 2s", "owner": "taskd", "status": "pending", "metadata": {"taskd": {"agent": "exec", "prompt": "true", "priority": 3, "schedule": "@every 2s", "recurrence": ` + string(r) + `}}}`
	if err := os.WriteFile(filepath.Join(path, "1.json"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.NewConfig(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := taskfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, dir
}

func runsOf(t *testing.T, dir *taskfile.Dir) []*taskfile.Task {
	t.Helper()
	ids, _ := dir.List()
	var out []*taskfile.Task
	for _, id := range ids {
		tf, err := dir.Read(id)
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := tf.Metadata.Object("taskd").String("parent"); p == "1" {
			out = append(out, tf)
		}
	}
	return out
}

func notGoing(string) bool { return false }

// TestFire_ExactlyOnce: a run due is made once, with the schedule's prompt
// and settings and the time it stands for; fired again at the same time,
// nothing more is made.
func TestFire_ExactlyOnce(t *testing.T) {
	cfg, dir := schedule(t, recur.Record{For: "@every 2s", Next: t0})
	ctx := context.Background()
	for range 2 {
		_, _, err := recur.List{Config: cfg, Dir: dir, Going: notGoing}.Fire(ctx, "1", t0)
		if err != nil && err != recur.ErrNothing {
			t.Fatal(err)
		}
	}
	runs := runsOf(t, dir)
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	m := runs[0].Metadata.Object("taskd")
	if p, _ := m.String("prompt"); p != "true" {
		t.Errorf("the run's prompt is %q", p)
	}
	if n, _ := m.Int("priority"); n != 3 {
		t.Errorf("the run's priority is %d, want the schedule's 3", n)
	}
	if at, _ := m.String("scheduledFor"); at != task.Stamp(t0) {
		t.Errorf("the run stands for %s", at)
	}
	s, _ := dir.Read("1")
	if r := recur.Of(s); r.Runs != 1 || r.LastRun != runs[0].ID || !r.Firing.IsZero() || !r.Next.Equal(t0.Add(2*time.Second)) {
		t.Errorf("the schedule records %+v", r)
	}
}

// TestFire_AfterACrash: a schedule whose file says a run is being made
// (a crash came between the two writes of a firing) gets that run made
// if its file is not there, and finds it if it is: never two, never none.
func TestFire_AfterACrash(t *testing.T) {
	ctx := context.Background()
	t.Run("before the run's file", func(t *testing.T) {
		cfg, dir := schedule(t, recur.Record{For: "@every 2s", Next: t0, Firing: t0})
		if _, run, err := (recur.List{Config: cfg, Dir: dir, Going: notGoing}).Fire(ctx, "1", t0.Add(time.Minute)); err != nil || run == "" {
			t.Fatalf("Fire = %q, %v", run, err)
		}
		if runs := runsOf(t, dir); len(runs) != 1 {
			t.Fatalf("%d runs, want 1", len(runs))
		}
	})
	t.Run("after the run's file", func(t *testing.T) {
		cfg, dir := schedule(t, recur.Record{For: "@every 2s", Next: t0, Firing: t0})
		made := `{"subject": "every 2s", "owner": "taskd", "metadata": {"taskd": {"parent": "1", "name": "` + recur.RunName(t0) + `", "prompt": "true", "scheduledFor": "` + task.Stamp(t0) + `"}}}`
		tf, _ := taskfile.Parse([]byte(made), "new", "")
		created, err := dir.Create(ctx, tf)
		if err != nil {
			t.Fatal(err)
		}
		_, run, err := recur.List{Config: cfg, Dir: dir, Going: notGoing}.Fire(ctx, "1", t0.Add(time.Minute))
		if err != nil || run != created.ID {
			t.Fatalf("Fire = %q, %v; want the run %s found", run, err, created.ID)
		}
		if runs := runsOf(t, dir); len(runs) != 1 {
			t.Fatalf("%d runs, want 1", len(runs))
		}
		s, _ := dir.Read("1")
		if r := recur.Of(s); r.LastRun != created.ID || !r.Firing.IsZero() {
			t.Errorf("the schedule records %+v", r)
		}
	})
}

// TestFire_SkipsWhileGoing: a time that comes while the last run goes on
// is passed over (counted), unless the schedule says overlap.
func TestFire_SkipsWhileGoing(t *testing.T) {
	cfg, dir := schedule(t, recur.Record{For: "@every 2s", Next: t0, LastRun: "9", Runs: 1})
	going := func(id string) bool { return id == "9" }
	if _, run, err := (recur.List{Config: cfg, Dir: dir, Going: going}).Fire(context.Background(), "1", t0); err != nil || run != "" {
		t.Fatalf("Fire = %q, %v; want nothing made", run, err)
	}
	s, _ := dir.Read("1")
	if r := recur.Of(s); r.Skipped != 1 || !r.Next.Equal(t0.Add(2*time.Second)) || r.Runs != 1 {
		t.Errorf("the schedule records %+v", r)
	}
}

// TestFire_NewAndChanged: a schedule without a record, or whose
// expression changed, gets its next time from now, and no run.
func TestFire_NewAndChanged(t *testing.T) {
	for _, rec := range []recur.Record{{}, {For: "@every 1h", Next: t0.Add(-time.Hour), Runs: 4}} {
		cfg, dir := schedule(t, rec)
		if _, run, err := (recur.List{Config: cfg, Dir: dir, Going: notGoing}).Fire(context.Background(), "1", t0); err != nil || run != "" {
			t.Fatalf("%+v: Fire = %q, %v", rec, run, err)
		}
		s, _ := dir.Read("1")
		if r := recur.Of(s); r.For != "@every 2s" || !r.Next.Equal(t0.Add(2*time.Second)) || r.Runs != rec.Runs {
			t.Errorf("%+v: the schedule records %+v", rec, r)
		}
	}
}

// TestDecide: what a schedule needs at a time, from its record; a next
// time further than the schedule's first time after now was computed on
// a clock since set back, and is computed again.
func TestDecide(t *testing.T) {
	daily, err := calendar.ParseSchedule("CRON_TZ=UTC 0 2 * * *")
	if err != nil {
		t.Fatal(err)
	}
	tomorrow := t0.Truncate(24 * time.Hour).Add(26 * time.Hour) // t0 is 12:00: 02:00 the next day
	for _, tt := range []struct {
		name string
		rec  recur.Record
		now  time.Time
		want recur.Decision
	}{
		{"new", recur.Record{}, t0, recur.Restart},
		{"changed", recur.Record{For: "@daily", Next: tomorrow}, t0, recur.Restart},
		{"waiting", recur.Record{For: daily.String(), Next: tomorrow}, t0, recur.Wait},
		{"due", recur.Record{For: daily.String(), Next: tomorrow}, tomorrow, recur.Due},
		{"firing", recur.Record{For: daily.String(), Next: tomorrow, Firing: t0}, t0, recur.Due},
		{"clock set back a day", recur.Record{For: daily.String(), Next: tomorrow.Add(24 * time.Hour)}, t0, recur.Restart},
		{"clock set back an hour", recur.Record{For: daily.String(), Next: tomorrow}, t0.Add(-time.Hour), recur.Wait},
	} {
		if got := recur.Decide(daily, tt.rec, tt.now); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	never, err := calendar.ParseSchedule("0 0 30 2 *")
	if err != nil {
		t.Fatal(err)
	}
	if got := recur.Decide(never, recur.Record{For: never.String()}, t0); got != recur.Never {
		t.Errorf("a schedule with no time, its next time computed: %v, want Never", got)
	}
}
