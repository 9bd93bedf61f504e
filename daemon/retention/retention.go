// Package retention keeps a list's area from growing without bound. A
// Policy says how long the run folders and inboxes of ended tasks are kept
// and how many run folders each keeps; Plan lists what the policy removes
// from one list, Apply removes it. A TaskPolicy says how long the files of
// taskd's ended tasks are kept; PlanTasks (reading every file) and
// PlanKnown (from what the daemon knows of each, a TaskInfo) list those it
// removes, each checked again under its lock (StillExpired). Nothing of a
// task that has not ended is ever touched, nor anything newer than the
// policy's age but its surplus run folders; the files of tasks that are
// not taskd's are never removed. The daemon applies its policies at start
// and every hour; `taskd clean` applies them on demand.
//
// The event log is bounded by rotation (package eventlog), and the kept
// lock directories of processes that are gone by PlanLocks.
package retention

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/internal/fsroot"
)

// A Policy says what of ended tasks is kept.
type Policy struct {
	// MaxAge: run folders and inboxes of ended tasks (or of task files
	// that are gone) untouched for longer than this are removed.
	MaxAge time.Duration
	// KeepRuns: an ended task keeps at most its last KeepRuns run folders,
	// however recent the others; 0 keeps every one younger than MaxAge.
	KeepRuns int
}

// A Task says what retention needs to know of a task: whether its file is
// there, and whether it has ended (it will do nothing more unless a person
// starts it again). A file that cannot be read counts as there and not
// ended: nothing of it is removed.
type Task struct {
	Exists, Ended bool
}

// A Removal is one path of a list's area the policy removes, relative to
// the list directory, with why and how many bytes its files hold.
type Removal struct {
	Path  string
	Why   string
	Bytes int64
}

// Plan lists what policy p removes from the list at listDir at time now.
// task reports on the list's tasks by id.
func Plan(listDir string, p Policy, now time.Time, task func(id string) Task) ([]Removal, error) {
	var out []Removal
	var errs []error
	runs := filepath.Join(area.Name, "runs")
	ids, err := dirNames(listDir, runs)
	if err != nil {
		errs = append(errs, err)
	}
	for _, id := range ids {
		rs, err := planRuns(listDir, filepath.Join(runs, id), p, now, func() Task { return task(id) })
		out = append(out, rs...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	inbox := filepath.Join(area.Name, "inbox")
	ids, err = dirNames(listDir, inbox)
	if err != nil {
		errs = append(errs, err)
	}
	for _, id := range ids {
		if t := task(id); t.Exists && !t.Ended {
			continue
		}
		rel := filepath.Join(inbox, id)
		if age := now.Sub(newest(listDir, rel)); age > p.MaxAge {
			out = append(out, Removal{Path: rel, Why: "inbox of an ended task, untouched for " + Days(age), Bytes: size(listDir, rel)})
		}
	}
	return out, errors.Join(errs...)
}

// planRuns lists the run folders of one task the policy removes, and the
// task's folder of run folders if none would be left. The task is looked
// at only if the policy would remove something of an ended one.
func planRuns(listDir, rel string, p Policy, now time.Time, task func() Task) ([]Removal, error) {
	names, err := dirNames(listDir, rel)
	if err != nil {
		return nil, err
	}
	// Attempts, newest first; a name that is not a number is not taskd's.
	var attempts []int
	for _, n := range names {
		if a, err := strconv.Atoi(n); err == nil && strconv.Itoa(a) == n {
			attempts = append(attempts, a)
		}
	}
	slices.Sort(attempts)
	slices.Reverse(attempts)
	ages := make([]time.Duration, len(attempts))
	some := false
	for i, a := range attempts {
		ages[i] = now.Sub(newest(listDir, filepath.Join(rel, strconv.Itoa(a))))
		some = some || ages[i] > p.MaxAge || (p.KeepRuns > 0 && i >= p.KeepRuns)
	}
	if !some {
		return nil, nil
	}
	t := task()
	if t.Exists && !t.Ended {
		return nil, nil
	}
	var out []Removal
	for i, a := range attempts {
		run := filepath.Join(rel, strconv.Itoa(a))
		var why string
		switch {
		case ages[i] > p.MaxAge && t.Exists:
			why = "run folder of an ended task, untouched for " + Days(ages[i])
		case ages[i] > p.MaxAge:
			why = "run folder of a task whose file is gone, untouched for " + Days(ages[i])
		case t.Exists && p.KeepRuns > 0 && i >= p.KeepRuns:
			why = fmt.Sprintf("run folder of an ended task beyond its last %d", p.KeepRuns)
		default:
			continue
		}
		out = append(out, Removal{Path: run, Why: why, Bytes: size(listDir, run)})
	}
	if len(out) == len(names) && len(names) > 0 && !t.Exists {
		// Everything goes: the task's folder with it.
		return []Removal{{Path: rel, Why: "run folders of a task whose file is gone, untouched for over " + Days(p.MaxAge), Bytes: sum(out)}}, nil
	}
	return out, nil
}

// Apply removes what Plan listed, following no link, and returns the bytes
// the files removed held. It goes on after an error and returns them all.
func Apply(listDir string, rs []Removal) (int64, error) {
	var total int64
	var errs []error
	for _, r := range rs {
		n, err := fsroot.RemoveAll(listDir, r.Path)
		total += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return total, errors.Join(errs...)
}

// dirNames returns the names of the directories in rel, none if it is
// missing.
func dirNames(listDir, rel string) ([]string, error) {
	entries, err := fsroot.ReadDir(listDir, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func sum(rs []Removal) int64 {
	var n int64
	for _, r := range rs {
		n += r.Bytes
	}
	return n
}

// Days formats an age for people: "45 days", "3 hours".
func Days(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%d hours", int(d/time.Hour))
	}
	return d.Round(time.Minute).String()
}
