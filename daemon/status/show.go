package status

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/held"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
	"golang.org/x/sys/unix"
)

// A Detail is everything taskd show tells of one task: what status shows
// of it, and what happened — the agent's summary, what its attempts
// spent, the work it left on a branch, its children's outcomes, the last
// lines of its output and where its run folder is. Show builds it; taskd
// show prints it, and anything else that shows a task (a server, a
// terminal view) can use the same value.
type Detail struct {
	Task
	File string `json:"file"` // the task file
	// Outcome is the word status shows for the task's state (StateWord).
	Outcome string `json:"outcome"`
	// Reason is why the task needs a person, failed, waits or is held,
	// in the words of its file (or of the daemon that holds it).
	Reason string `json:"reason,omitempty"`
	// Agent is the profile its latest attempt ran with.
	Agent string `json:"agent,omitempty"`
	// Attempts is the number of its latest attempt (of a workflow: of
	// its steps' runs).
	Attempts   int       `json:"attempts,omitempty"`
	StartedAt  time.Time `json:"startedAt,omitzero"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	// Last is what the latest attempt spent (so far, while it runs);
	// Total adds up every attempt whose run folder is kept.
	Last  *Usage `json:"last,omitempty"`
	Total *Usage `json:"total,omitempty"`
	// Kids are the task's children, with how each ended.
	Kids []Child `json:"childTasks,omitempty"`
	// Output is the end of the latest attempt's output.
	Output *Output `json:"output,omitempty"`
}

// Usage is what one or more attempts spent. Zero fields were not reported
// by the agent.
type Usage struct {
	Runs       int      `json:"runs"` // the attempts it adds up
	Turns      int      `json:"turns,omitempty"`
	Tokens     int64    `json:"tokens,omitempty"` // input, output and cache, together
	CostUSD    *float64 `json:"costUsd,omitempty"`
	Estimated  bool     `json:"costEstimated,omitempty"`
	DurationMs int64    `json:"durationMs,omitempty"`
}

// A Child is one of a task's children, as Detail shows it.
type Child struct {
	ID      string `json:"id"`
	Name    string `json:"name,omitempty"`
	Outcome string `json:"outcome"`
	Summary string `json:"summary,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Output is the end of an attempt's output: its readable transcript for
// an agent that streams, else its standard output, else (when that is
// empty) its standard error.
type Output struct {
	File  string   `json:"file"` // its path
	Lines []string `json:"lines"`
	// Cut says that lines before these were left out.
	Cut bool `json:"cut,omitempty"`
}

// ShowOptions are what Show is told besides the task.
type ShowOptions struct {
	// Held are the tasks the daemon serving the root holds (package
	// held), if one does.
	Held []held.Task
	// Lines is how many lines of output to keep (0: none).
	Lines int
}

// maxTail bounds how much of a log Show reads: its end.
const maxTail = 64 << 10

// Show reads task id of list under root and returns what happened to it.
// It reads files only, never waits on one (a FIFO, a lock), and follows no
// link inside the list.
func Show(root, list, id string, opt ShowOptions) (*Detail, error) {
	if !taskfile.ValidID(id) {
		return nil, fmt.Errorf("%q is not a task id", id)
	}
	if fi, err := os.Stat(filepath.Join(root, list)); err != nil || !fi.IsDir() || strings.ContainsRune(list, '/') {
		return nil, fmt.Errorf("no list %q in %s", list, root)
	}
	lists, err := Snapshot(root, []string{list}, true)
	if err != nil {
		return nil, fmt.Errorf("read list %s: %w", list, err)
	}
	if len(lists) == 0 {
		return nil, fmt.Errorf("no task %s/%s", list, id)
	}
	Attend(lists, opt.Held)
	return Describe(root, &lists[0], id, opt.Lines)
}

// Describe is Show for task id of list l, a list under root already read
// (and attended): a view that keeps the list as it changes (taskd ui)
// tells what happened to a task without reading the list again. It reads
// the task's file and its run folders, and keeps lines lines of its
// output.
func Describe(root string, l *List, id string, lines int) (*Detail, error) {
	list := l.ID
	byID := map[string]*Task{}
	for i := range l.Tasks {
		byID[l.Tasks[i].ID] = &l.Tasks[i]
	}
	t := byID[id]
	if t == nil {
		return nil, fmt.Errorf("no task %s/%s", list, id)
	}
	listDir := filepath.Join(root, list)
	d := &Detail{Task: *t, File: filepath.Join(listDir, id+".json"), Outcome: StateWord(t)}
	d.Reason = reason(t)
	for _, c := range t.Children {
		if ct := byID[c]; ct != nil {
			d.Kids = append(d.Kids, Child{ID: ct.ID, Name: ct.Name, Outcome: StateWord(ct), Summary: ct.Summary, Error: ct.Error})
		}
	}
	if tf, err := taskfile.ReadFile(d.File); err == nil {
		rec := task.RecordOf(tf)
		d.Attempts, d.StartedAt, d.FinishedAt = rec.Attempt, rec.StartedAt, rec.FinishedAt
	}
	runs := readRuns(listDir, id)
	if len(runs) > 0 {
		last := runs[len(runs)-1]
		d.Agent = last.profile
		if d.Cwd == "" && d.CwdNote == "" {
			// A task that names no directory ran in its list's, or in
			// the home directory: cmd.json says which.
			d.Cwd = last.cwd
		}
		d.Last = last.usage()
		if d.Last == nil && t.Progress != nil { // running: its progress so far
			d.Last = progressUsage(t.Progress)
		}
		if len(runs) > 1 {
			d.Total = total(runs)
		}
		if d.Logs == "" { // a workflow's: its latest step's
			d.Logs = last.dir
		}
		d.Output = tail(listDir, last.dir, lines)
	}
	return d, nil
}

// StateWord is the word status shows for task t's state: rejected, held,
// its metadata.taskd.state, or (for a task with none) pending, blocked,
// completed, or the Claude Code status of a task that is not taskd's.
func StateWord(t *Task) string {
	switch {
	case t.Rejected != "":
		return "rejected"
	case t.Held != "":
		return "held"
	case t.State != "":
		return t.State
	case !t.Taskd:
		return t.Status
	case t.Status == taskfile.StatusCompleted:
		return "completed"
	case len(t.BlockedBy) > 0:
		return "blocked"
	case t.Schedule != "":
		return "recurring" // a schedule: it makes runs, and never runs itself
	case !t.StartsAt.IsZero():
		return "scheduled" // its notBefore is to come
	}
	return "pending"
}

// reason is why task t needs a person, failed, waits or is held.
func reason(t *Task) string {
	switch StateWord(t) {
	case "rejected":
		return t.Rejected
	case "held":
		return t.Held
	case string(task.NeedsHuman):
		return t.WaitingFor
	case string(task.Paused):
		return t.PausedBy
	case string(task.Failed), string(task.TimedOut), string(task.Stopped), string(task.Cancelled), string(task.Retrying):
		return t.Error
	case "blocked":
		return "blocked by " + strings.Join(t.BlockedBy, ", ")
	}
	return ""
}

// A run is one attempt's run folder, as Show reads it.
type run struct {
	n       int
	dir     string
	profile string // cmd.json's
	cwd     string // cmd.json's: where the agent ran
	result  *runResult
}

// runResult is what Show reads of an attempt's result.json.
type runResult struct {
	CostUSD    *float64   `json:"costUsd"`
	StartedAt  *time.Time `json:"startedAt"`
	DurationMs int64      `json:"durationMs"`
	Turns      int        `json:"turns"`
	Progress   *struct {
		Turns     int  `json:"turns"`
		Estimated bool `json:"costEstimated"`
		Tokens    struct{ Input, Output, CacheRead, CacheWrite int64 }
	} `json:"progress"`
}

func (r run) usage() *Usage {
	if r.result == nil {
		return nil
	}
	u := &Usage{Runs: 1, Turns: r.result.Turns, CostUSD: r.result.CostUSD, DurationMs: r.result.DurationMs}
	if p := r.result.Progress; p != nil {
		u.Tokens = p.Tokens.Input + p.Tokens.Output + p.Tokens.CacheRead + p.Tokens.CacheWrite
		u.Estimated = p.Estimated
		if u.Turns == 0 {
			u.Turns = p.Turns
		}
	}
	return u
}

func progressUsage(p *Progress) *Usage {
	cost := p.CostUSD
	return &Usage{Runs: 1, Turns: p.Turns, Tokens: p.Tokens, CostUSD: &cost, Estimated: p.Estimated}
}

// total adds up the usage of runs that have ended.
func total(runs []run) *Usage {
	t := &Usage{}
	for _, r := range runs {
		u := r.usage()
		if u == nil {
			continue
		}
		t.Runs++
		t.Turns += u.Turns
		t.Tokens += u.Tokens
		t.DurationMs += u.DurationMs
		t.Estimated = t.Estimated || u.Estimated
		if u.CostUSD != nil {
			sum := *u.CostUSD
			if t.CostUSD != nil {
				sum += *t.CostUSD
			}
			sum = math.Round(sum*1e6) / 1e6 // no float noise in the sum
			t.CostUSD = &sum
		}
	}
	if t.Runs == 0 {
		return nil
	}
	return t
}

// readRuns reads the run folders kept for task id, oldest first.
func readRuns(listDir, id string) []run {
	runsDir := area.RunsDir(listDir, id)
	entries, err := fsroot.ReadDir(listDir, runsDir)
	if err != nil {
		return nil
	}
	var out []run
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n <= 0 || !e.IsDir() {
			continue
		}
		r := run{n: n, dir: filepath.Join(runsDir, e.Name())}
		var cmd struct {
			Profile string `json:"profile"`
			Cwd     string `json:"cwd"`
		}
		if readJSON(listDir, filepath.Join(r.dir, "cmd.json"), &cmd) {
			r.profile, r.cwd = cmd.Profile, cmd.Cwd
		}
		var res runResult
		if readJSON(listDir, filepath.Join(r.dir, "result.json"), &res) {
			r.result = &res
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b run) int { return a.n - b.n })
	return out
}

// tail returns the last n lines of the attempt's output in run folder
// dir: its transcript, else its standard output, else its standard error.
func tail(listDir, dir string, n int) *Output {
	if n <= 0 {
		return nil
	}
	for _, name := range []string{"transcript.log", "stdout.log", "stderr.log"} {
		path := filepath.Join(dir, name)
		data, cut, err := readEnd(listDir, path, maxTail)
		if err != nil || strings.TrimSpace(string(data)) == "" {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if cut && len(lines) > 1 {
			lines = lines[1:] // the first is a part of a line
		}
		o := &Output{File: path, Cut: cut}
		if len(lines) > n {
			lines, o.Cut = lines[len(lines)-n:], true
		}
		o.Lines = lines
		return o
	}
	return nil
}

// readEnd returns the last max bytes of the regular file path inside
// base, following no link and never waiting on the file, and whether
// anything before them was left out.
func readEnd(base, path string, limit int64) ([]byte, bool, error) {
	f, err := fsroot.OpenFile(base, path, os.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, &fs.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	}
	off := max(fi.Size()-limit, 0)
	buf := make([]byte, fi.Size()-off)
	k, err := f.ReadAt(buf, off)
	if err != nil && k < len(buf) && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	return buf[:k], off > 0, nil
}

// readJSON decodes the small JSON file path inside base into v.
func readJSON(base, path string, v any) bool {
	data, err := fsroot.ReadFile(base, path, 16<<20) // result.json may carry a long output
	return err == nil && json.Unmarshal(data, v) == nil
}

// Spent adds up, by agent profile, what the attempts of task id of the
// list at listDir that ended at or after since cost, as their results
// record it: what a view shows as the day's cost. An attempt that runs
// has no result yet (its progress says what it has spent so far).
func Spent(listDir, id string, since time.Time) map[string]float64 {
	out := map[string]float64{}
	for _, r := range readRuns(listDir, id) {
		res := r.result
		if res == nil || res.CostUSD == nil || res.StartedAt == nil {
			continue
		}
		if end := res.StartedAt.Add(time.Duration(res.DurationMs) * time.Millisecond); end.Before(since) {
			continue
		}
		out[r.profile] = math.Round((out[r.profile]+*res.CostUSD)*1e6) / 1e6
	}
	return out
}

// RunProfile returns the agent profile attempt n of task id of the list
// at listDir runs with, as its cmd.json records it ("" when it does not).
func RunProfile(listDir, id string, n int) string {
	var cmd struct {
		Profile string `json:"profile"`
	}
	readJSON(listDir, filepath.Join(area.RunDir(listDir, id, n), "cmd.json"), &cmd)
	return cmd.Profile
}
