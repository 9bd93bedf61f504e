package retention_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/retention"
)

// makeRuns makes run folders 1..n of task id in list, each with a result
// file, the newest touched at now and each older one a day earlier.
func makeRuns(t *testing.T, list, id string, n int, now time.Time, ageOfNewest time.Duration) {
	t.Helper()
	for a := 1; a <= n; a++ {
		dir := filepath.Join(list, ".taskd", "runs", id, strconv.Itoa(a))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, "result.json")
		os.WriteFile(f, []byte(`{"exitCode":0}`), 0o600)
		at := now.Add(-ageOfNewest - time.Duration(n-a)*24*time.Hour)
		os.Chtimes(f, at, at)
		os.Chtimes(dir, at, at)
	}
}

func TestPlan(t *testing.T) {
	day := 24 * time.Hour
	now := time.Now()
	list := t.TempDir()
	makeRuns(t, list, "old-ended", 2, now, 40*day)                // both past 30 days
	makeRuns(t, list, "many-ended", 5, now, 0)                    // 5 recent: 2 beyond the last 3
	makeRuns(t, list, "running", 5, now, 40*day)                  // old, but the task runs
	makeRuns(t, list, "gone-old", 2, now, 40*day)                 // file gone: the folder goes
	makeRuns(t, list, "gone-recent", 2, now, day)                 // file gone, recent: kept
	makeRuns(t, list, "mixed-ended", 2, now, 29*day+12*time.Hour) // attempt 1 is 30.5 days old
	os.MkdirAll(filepath.Join(list, ".taskd", "inbox", "old-ended"), 0o700)
	os.MkdirAll(filepath.Join(list, ".taskd", "inbox", "running"), 0o700)
	old := now.Add(-40 * day)
	os.Chtimes(filepath.Join(list, ".taskd", "inbox", "old-ended"), old, old)
	os.Chtimes(filepath.Join(list, ".taskd", "inbox", "running"), old, old)

	tasks := map[string]retention.Task{
		"old-ended":   {Exists: true, Ended: true},
		"many-ended":  {Exists: true, Ended: true},
		"running":     {Exists: true},
		"mixed-ended": {Exists: true, Ended: true},
	}
	p := retention.Policy{MaxAge: 30 * day, KeepRuns: 3}
	rs, err := retention.Plan(list, p, now, func(id string) retention.Task { return tasks[id] })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Path)
		if r.Why == "" || (r.Bytes <= 0 && filepath.Base(filepath.Dir(r.Path)) == "runs") {
			t.Errorf("%s: why %q, %d bytes; want a reason and the result file's bytes", r.Path, r.Why, r.Bytes)
		}
	}
	slices.Sort(got)
	want := []string{
		".taskd/inbox/old-ended",
		".taskd/runs/gone-old",
		".taskd/runs/many-ended/1",
		".taskd/runs/many-ended/2",
		".taskd/runs/mixed-ended/1",
		".taskd/runs/old-ended/1",
		".taskd/runs/old-ended/2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("plan:\n got %q\nwant %q", got, want)
	}
	n, err := retention.Apply(list, rs)
	if err != nil {
		t.Fatal(err)
	}
	if n <= 0 {
		t.Errorf("Apply removed %d bytes", n)
	}
	for _, p := range want {
		if _, err := os.Lstat(filepath.Join(list, p)); !os.IsNotExist(err) {
			t.Errorf("%s is still there", p)
		}
	}
	for _, p := range []string{".taskd/runs/running/1", ".taskd/runs/gone-recent/1", ".taskd/runs/many-ended/5", ".taskd/runs/mixed-ended/2", ".taskd/inbox/running"} {
		if _, err := os.Lstat(filepath.Join(list, p)); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	// Applied twice, the policy finds nothing more.
	if rs, _ := retention.Plan(list, p, now, func(id string) retention.Task { return tasks[id] }); len(rs) != 0 {
		t.Errorf("a second plan removes %v", rs)
	}
}

// The kept lock directories of a process that is gone are removed; a
// live process's, and one with something in it, are not.
func TestPlanLocks(t *testing.T) {
	list := t.TempDir()
	locks := filepath.Join(list, ".taskd", "locks")
	dead := deadPid(t)
	for _, name := range []string{strconv.Itoa(dead) + ".1", strconv.Itoa(dead) + ".2", strconv.Itoa(os.Getpid()) + ".1", "other", strconv.Itoa(dead) + ".3"} {
		os.MkdirAll(filepath.Join(locks, name), 0o700)
	}
	os.WriteFile(filepath.Join(locks, strconv.Itoa(dead)+".3", "x"), nil, 0o600)
	rs, err := retention.PlanLocks(list)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, filepath.Base(r.Path))
	}
	want := []string{strconv.Itoa(dead) + ".1", strconv.Itoa(dead) + ".2"}
	if !slices.Equal(got, want) {
		t.Errorf("locks removed %v, want %v", got, want)
	}
}

// deadPid returns the pid of a process that has exited and been reaped.
func deadPid(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	p.Wait()
	return p.Pid
}
