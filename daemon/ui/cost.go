package ui

import (
	"math"
	"path/filepath"
	"time"

	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/daemon/task"
)

// costs keeps what the agents cost today, by profile: for each task, its
// attempts that ended today (their results, status.Spent) and what its
// running attempt has spent so far (its progress). A task's run folders
// are read again only when its attempt or state changes, and only for a
// task that did something today.
type costs struct {
	root  string
	day   time.Time // the start of today, in the local time zone
	tasks map[key]*taskCost
}

// taskCost is what one task cost today.
type taskCost struct {
	attempt int
	state   string
	ended   map[string]float64 // by profile
	profile string             // of its running attempt
	read    bool               // profile was read (once its agent runs)
	running float64            // what its running attempt spent so far
}

func newCosts(root string) *costs {
	return &costs{root: root, tasks: map[key]*taskCost{}}
}

// startOfDay is the local midnight before now.
func startOfDay(now time.Time) time.Time {
	y, m, d := now.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, now.Location())
}

// at moves the day to now's, and reports whether it changed: every task
// is counted again then.
func (c *costs) at(now time.Time) bool {
	day := startOfDay(now)
	if day.Equal(c.day) {
		return false
	}
	c.day = day
	clear(c.tasks)
	return true
}

// list counts the tasks of l again where they changed, and forgets those
// it no longer has.
func (c *costs) list(l *status.List) {
	listDir := filepath.Join(c.root, l.ID)
	seen := make(map[string]bool, len(l.Tasks))
	for i := range l.Tasks {
		t := &l.Tasks[i]
		seen[t.ID] = true
		k := key{l.ID, t.ID}
		running := t.State == string(task.Running)
		if !running && t.Since.Before(c.day) || t.Attempt == 0 && t.Steps == 0 {
			delete(c.tasks, k) // nothing it did counts today
			continue
		}
		attempt := t.Attempt + t.Steps
		tc := c.tasks[k]
		if tc == nil || tc.attempt != attempt || tc.state != t.State {
			tc = &taskCost{attempt: attempt, state: t.State, ended: status.Spent(listDir, t.ID, c.day)}
			c.tasks[k] = tc
		}
		if running && t.Progress != nil && !tc.read {
			tc.read = true
			n := t.Attempt
			if t.Steps > 0 {
				n = t.Steps // a workflow's: its steps' runs
			}
			tc.profile = status.RunProfile(listDir, t.ID, n)
		}
		tc.running = 0
		if running && t.Progress != nil {
			tc.running = t.Progress.CostUSD
		}
	}
	for k := range c.tasks {
		if k.list == l.ID && !seen[k.id] {
			delete(c.tasks, k)
		}
	}
}

// forget forgets the tasks of list id (gone).
func (c *costs) forget(id string) {
	for k := range c.tasks {
		if k.list == id {
			delete(c.tasks, k)
		}
	}
}

// total is what each profile cost today.
func (c *costs) total() map[string]float64 {
	out := map[string]float64{}
	add := func(profile string, usd float64) {
		if usd > 0 {
			out[profile] = math.Round((out[profile]+usd)*1e6) / 1e6
		}
	}
	for _, tc := range c.tasks {
		for p, usd := range tc.ended {
			add(p, usd)
		}
		add(tc.profile, tc.running)
	}
	return out
}
