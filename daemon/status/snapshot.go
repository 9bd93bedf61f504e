// Package status reads what taskd status and taskd doctor show of a root:
// each list, whether the daemon serves it and why not, its tasks with
// their states and what they wait for, and the files it refused with the
// reasons and fixes of their notes. It only reads.
package status

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// StartingWaitsFor is what a starting task waits for: it is claimed, its
// attempt prepared, and its agent starts the moment a slot is free.
const StartingWaitsFor = "a slot: its attempt is claimed and prepared, and its agent starts as soon as a running agent of the daemon ends (concurrency)"

// Task is one task as taskd status shows it.
type Task struct {
	List     string `json:"list"`
	ID       string `json:"id"`
	Subject  string `json:"subject"`
	Status   string `json:"status"`          // Claude Code's status
	State    string `json:"state,omitempty"` // metadata.taskd.state
	Taskd    bool   `json:"taskd"`           // addressed to taskd
	Name     string `json:"name,omitempty"`  // a child's name among its siblings
	Workflow string `json:"workflow,omitempty"`
	Step     string `json:"step,omitempty"`
	// Steps is how many steps of a workflow have run (its run folders),
	// retries included.
	Steps int `json:"steps,omitempty"`
	// Attempt counts the agent attempts: of a plain task, its attempt
	// (retries included); of a workflow, the attempts of its current step
	// (1 plus the step's retries).
	Attempt  int       `json:"attempt,omitempty"`
	Parent   string    `json:"parent,omitempty"`
	Children []string  `json:"children,omitempty"`
	Since    time.Time `json:"since,omitzero"` // when the task entered its state (approximately)
	Error    string    `json:"error,omitempty"`
	// Dispatch says why an attempt sent to a worker waits
	// (metadata.taskd.dispatch): the NATS server is away, no worker has
	// taken it yet.
	Dispatch string `json:"dispatch,omitempty"`
	// WaitingFor says what a needs_human task waits for: the reason and
	// the answers it accepts.
	WaitingFor string   `json:"waitingFor,omitempty"`
	Options    []string `json:"options,omitempty"`
	BlockedBy  []string `json:"blockedBy,omitempty"` // blockers not completed
	Rejected   string   `json:"rejected,omitempty"`  // why the file is refused
	Fix        string   `json:"fix,omitempty"`       // how to fix a rejected file
	Archived   bool     `json:"archived,omitempty"`
	// Held says why the daemon holds the task back (a write it needs
	// failed), and HeldRetry when it tries again (Attend).
	// Interrupted says of a task a stopping daemon left pending that its
	// attempt was interrupted, and that it runs again.
	Interrupted string    `json:"interrupted,omitempty"`
	Held        string    `json:"held,omitempty"`
	HeldRetry   time.Time `json:"heldRetry,omitzero"`
	// Below are the tasks under this one that need a person, failed or
	// are held (Attend).
	Below []Below `json:"below,omitempty"`
	// Waits says what a waiting task waits for.
	Waits *Waits `json:"waits,omitempty"`
	// Pause is the paused agent profile that holds the task back (pauses.go).
	Pause *Pause `json:"pause,omitempty"`

	// Grants says, for a question about refused tool calls, what each
	// answer allows: "allow" the exact calls' rules, "allow-tool" their
	// whole tools.
	Grants map[string][]string `json:"grants,omitempty"`
	Runs                       // where and how its agent runs (runs.go)
	Queue                      // its priority, when it starts, a schedule's runs (queue.go)
}

// List is one list's tasks.
type List struct {
	ID    string `json:"id"`
	Tasks []Task `json:"tasks"`
	// Refused says why a daemon does not serve the list (CheckList), and
	// Fix what to do about it.
	Refused string `json:"refused,omitempty"`
	Fix     string `json:"fix,omitempty"`
	// Misnamed lists the files that look like task files but whose names
	// cannot be task ids: a daemon never reads them.
	Misnamed []Misnamed `json:"misnamed,omitempty"`
	// Hidden counts the tasks not addressed to taskd that were left out
	// (all of them are shown when Snapshot's all is set).
	Hidden int `json:"hidden,omitempty"`
	// Paused is the pause of the list, or of everything, if one holds it
	// (taskd pause, or a budget per window spent).
	Paused *Pause `json:"paused,omitempty"`
}

// A Misnamed is a file of a list that taskd does not read because of
// its name (taskfile.Misnamed).
type Misnamed struct {
	Name    string `json:"name"`
	Problem string `json:"problem"`
	Fix     string `json:"fix"`
}

// Snapshot reads the lists under root (all, or those named) and returns
// their tasks: taskd's own, and with all set every task. It reads files
// only; it works whether or not a daemon runs.
func Snapshot(root string, lists []string, all bool) ([]List, error) {
	if len(lists) == 0 {
		entries, err := fsroot.ReadDirectory(root)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				lists = append(lists, e.Name())
			}
		}
	}
	pauses, _ := pausefile.Read(root) // a bad file: no pause is shown
	var out []List
	for _, id := range lists {
		ls, err := snapshotList(root, id, all, pauses)
		if err != nil {
			return nil, err
		}
		if len(ls.Tasks) > 0 || !all {
			out = append(out, ls)
		}
	}
	return out, nil
}

func snapshotList(root, id string, all bool, pauses pausefile.Record) (List, error) {
	tr, err := NewTracker(root, id, all)
	if err != nil {
		return List{ID: id, Tasks: []Task{}, Paused: listPause(pauses, id, time.Now())}, err
	}
	tr.SetPauses(pauses)
	return tr.List(), nil
}

func fillStatus(ts *Task, t *taskfile.Task, owned bool, path string) {
	ts.Subject, ts.Status, ts.Taskd = firstLine(t.Subject), t.Status, owned
	ts.BlockedBy = t.BlockedBy
	ts.Workflow, _ = t.Metadata.String("workflowType")
	ts.Step, _ = t.Metadata.String("currentStep")
	if ts.Parent, _ = t.Metadata.String("parentTaskId"); ts.Parent == "" {
		ts.Parent, _ = t.Metadata.Object("taskd").String("parent")
	}
	m := t.Metadata.Object("taskd")
	rec := task.RecordOf(t)
	ts.State = string(rec.State)
	ts.Name, _ = m.String("name")
	n := rec.Attempt
	ts.Attempt = n
	if ts.Workflow != "" && n > 0 {
		// A workflow's attempt counts its steps' runs: that is its steps;
		// its attempt is the current step's (the navigator's retries).
		retries, _ := t.Metadata.Int("retryCount")
		ts.Steps, ts.Attempt = n, int(retries)+1
	}
	ts.Error, ts.Dispatch, ts.Archived = rec.Error, rec.Dispatch, rec.Archived
	if h := rec.Hold; h != nil && ts.State == string(task.NeedsHuman) {
		ts.WaitingFor, _ = h.String("reason")
		if r, ok := h.String("refused"); ok {
			ts.WaitingFor += " (refused: " + r + ")"
		}
		ts.Options = task.Strings(h, "options")
		if kind, _ := h.String("kind"); kind == "permission" {
			ts.Grants = grantsOf(h, ts.Options)
		}
	}
	if ts.State == string(task.Starting) {
		ts.WaitingFor = StartingWaitsFor
	}
	if rec.State == task.None && rec.Interrupted > 0 {
		ts.Interrupted = fmt.Sprintf("attempt %d was stopped with the daemon; it runs again when a daemon serves the list, at its turn", n)
		if rec.InterruptedSession != "" {
			ts.Interrupted += ", resuming its agent's session"
		}
	}
	if b := rec.Boundary; b != nil && ts.State == string(task.Succeeded) {
		next, _ := b.String("next")
		ts.WaitingFor = "a stage boundary: answer continue to go on to " + next
		ts.Options = task.Strings(b, "options")
	}
	if ts.Since = task.Since(t); ts.Since.IsZero() {
		ts.Since = modTime(path)
	}
	ts.Runs = runsOf(t, filepath.Dir(path))
	ts.Queue = queueOf(t, time.Now())
}

// grantsOf reads what the answers to a question about refused tool calls
// (hitl h, with options) allow: "allow" its grant, "allow-tool" its
// denied tools.
func grantsOf(h *taskfile.Object, options []string) map[string][]string {
	g := map[string][]string{}
	if slices.Contains(options, "allow") {
		if rules := task.Strings(h, "grant"); len(rules) > 0 {
			g["allow"] = rules
		}
	}
	if slices.Contains(options, "allow-tool") {
		g["allow-tool"] = task.Strings(h, "denied")
	}
	if len(g) == 0 {
		return nil
	}
	return g
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func modTime(path string) time.Time {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}
