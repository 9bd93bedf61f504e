// Package job is one goroutine's work on one task, and what every kind of
// work shares: the task's list, the daemon's configuration, runner and
// catalog, the job's concurrency slot; the claim that must be on disk
// before an agent starts (Claim); and the record of how an attempt ended
// (Finish). The daemon's loop makes a Job for each task it decides to work
// on and hands it to the package of the task's kind (plain, flow, …),
// which does the work through it.
//
// A Job is used by its own goroutine only; its Env is shared and
// read-only.
package job

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/catalog"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/held"
	"github.com/taskd/taskd/daemon/prompt"
	"github.com/taskd/taskd/internal/clock"
	"github.com/taskd/taskd/taskfile"
)

// A List is a task list as jobs see it: its id, its files and its event
// log.
type List struct {
	ID     string
	Dir    *taskfile.Dir
	Events *eventlog.Log
}

// Path is the list directory.
func (l *List) Path() string { return l.Dir.Path() }

// RunDir is the run folder of attempt n of task id.
func (l *List) RunDir(id string, n int) string { return area.RunDir(l.Dir.Path(), id, n) }

// Emit appends ev to the list's event log, naming the list.
func (l *List) Emit(ev eventlog.Event) {
	ev.List = l.ID
	l.Events.Append(ev)
}

// A Runner runs an attempt's agent: package agent's Local on this machine.
type Runner interface {
	Run(ctx context.Context, a *agent.Attempt) (agent.Result, agent.Outcome)
}

// Env is what every job may use, shared and read-only.
type Env struct {
	Config  *config.Config
	Runner  Runner
	Catalog *catalog.Catalog
	Log     *slog.Logger
	Held    *held.Registry // the tasks held while a write fails (nil: none kept)
	// Pauses are the agent profiles paused by a usage limit (pause.go).
	Pauses *Pauses
	// Clock is the daemon's: the times jobs write (a start, an end, a
	// retry's time) are its (nil: the system's).
	Clock clock.Clock
}

// Now is the time on the daemon's clock.
func (e *Env) Now() time.Time {
	if e.Clock == nil {
		return time.Now()
	}
	return e.Clock.Now()
}

// A Slot is a job's concurrency slot, handed out by the daemon.
type Slot interface {
	// Acquire waits until the job holds its slot, or ctx ends (with why
	// the job must not start its agent).
	Acquire(ctx context.Context) error
	// Release gives the slot back once the job's agent has exited, so the
	// next agent can start while this job records the end. Only the
	// first call counts.
	Release()
	// Ready reports whether Acquire would return at once: the job holds
	// its slot, or one is free for it now. A claim made while it is not
	// is a claim ahead of the slot (Claim).
	Ready() bool
	// StepAside gives up the job's place in line, and the slot if it
	// holds one, while it waits for a lock another writer holds: the
	// tasks behind it go first. The next Acquire queues it again.
	StepAside()
}

// Kind is what a job does with its task.
type Kind int

const (
	Run     Kind = iota // run a pending task (a plain attempt or a workflow)
	Resume              // a waiting task's children (or handed-off task) are done
	Answer              // a person answered a task that needs one
	Cancel              // cancel a task that is not running
	Recover             // a task a dead daemon left running
	Deliver             // send an ended child's result to its parent
	Settle              // record an end decided without running it (Job.Settle)
	Fire                // make a schedule's run that is due (package recur)
)

var kindNames = [...]string{"run", "resume", "answer", "cancel", "recover", "deliver", "settle", "fire"}

func (k Kind) String() string { return kindNames[k] }

// A Scope is one task as the daemon's shared environment sees it,
// outside any job: the Env, the task's list and its id. The checks the
// loop makes of a task before it claims it (a plain task's prompt, say)
// take a Scope with the task's Spec; a Job is a Scope at work.
type Scope struct {
	*Env
	List *List
	ID   string
}

// A Job is one goroutine's work on one task.
type Job struct {
	Scope
	Kind Kind
	Slot Slot
	// Seen is the task file as the job read it when it began, if it did:
	// its first claim starts from these bytes instead of reading the
	// file again (taskfile.Dir.UpdateFrom), and is written only if the
	// file still holds them.
	Seen *taskfile.Task

	agents atomic.Int32 // the job's agents running or about to (runAgent)
	// wrote is the task file as the job's last write left it: the job's
	// next write starts from its bytes (update).
	wrote atomic.Pointer[taskfile.Task]
	// mark is the running mark a claim made ahead of its slot still owes
	// the file, its agent started (startmark.go).
	mark atomic.Pointer[startMark]
	// markTimer guards the write of each mark's own write (startMark.write).
	markTimer sync.Mutex
	// writing makes the job's own writes of its task (update) one at a
	// time: the mark's write of its own and the attempt's end never race
	// from the same bytes.
	writing sync.Mutex
}

// ErrNotRunnable ends a job whose task changed before it could do its
// work: the loop looks at the file again.
var ErrNotRunnable = errors.New("task is no longer runnable")

// Emit appends ev, about the task unless it names another, to the list's
// event log.
func (j Scope) Emit(ev eventlog.Event) {
	if ev.Task == "" {
		ev.Task = j.ID
	}
	j.List.Emit(ev)
}

// writeTimeout bounds a state write that must happen even while the
// daemon stops (the final state of an attempt).
const writeTimeout = 30 * time.Second

// WriteContext returns a context for writing final state: not cancelled
// with the job, but bounded.
func WriteContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
}

// ParsePrompt parses a prompt of the task's list, with the list's command
// files.
func (j Scope) ParsePrompt(text string) (*prompt.Script, error) {
	return prompt.Parse(text, prompt.ParseOptions{Commands: j.Catalog.Commands(j.List.Path()).Has})
}

// A Handler does the jobs of one kind of task: a plain task (package
// plain), a workflow (package flow), a task suspended by or asked about
// subagents (package subagent). The daemon's loop picks one by the job's
// kind and the task file, and hands it the job.
type Handler interface {
	// Do does job j's work on task t, its file as the job found it, and
	// returns the task as the job last wrote it (nil if it wrote nothing,
	// or does not know). ErrNotRunnable means the task no longer asked
	// for the work; other errors mean it could not be done now.
	Do(ctx context.Context, j *Job, t *taskfile.Task) (*taskfile.Task, error)
}

// ErrNoHandler is returned by a Handler for a kind of job it does not do.
var ErrNoHandler = errors.New("no such job for this kind of task")
