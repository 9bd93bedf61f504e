package task

import (
	"errors"
	"fmt"
)

// An Event is what happens to a task that changes its state.
type Event int

// The events that move a task.
const (
	Claim      Event = iota + 1 // an attempt (or a resumption, or an answer) starts
	Withdraw                    // a claim whose agent never started is taken back
	Succeed                     // the task reached its goal
	Wait                        // it ended its turn with children (or a handoff) outstanding
	AskPerson                   // it needs a person's answer
	Fail                        // it failed for good
	Retry                       // it failed and has retries left
	TimeOut                     // its agent ran past its timeout
	Cancel                      // a person (or its parent) cancelled it
	Interrupt                   // the daemon stopped while its agent ran: it runs again
	Iterate                     // a loop's iteration ended and another follows
	Stop                        // a workflow's loop guard stopped it
	Queue                       // a pushed child waits for /run or its turn
	Release                     // a queued child, or a task waiting on a handoff, may run
	Restart                     // a person runs the task again from the start
	BranchPass                  // a fork branch reached its join having passed
	BranchFail                  // a fork branch reached its join having failed
	Pause                       // its agent met a usage limit: it resumes when the limit resets
	Prepare                     // an attempt is claimed ahead of its slot: its agent waits for one
	Start                       // a prepared attempt's slot came: its agent starts
)

var eventNames = map[Event]string{
	Claim: "claim", Withdraw: "withdraw", Succeed: "succeed", Wait: "wait", AskPerson: "ask a person",
	Fail: "fail", Retry: "retry", TimeOut: "time out", Cancel: "cancel", Interrupt: "interrupt",
	Iterate: "iterate", Stop: "stop", Queue: "queue", Release: "release", Restart: "restart",
	BranchPass: "branch pass", BranchFail: "branch fail", Pause: "pause", Prepare: "prepare", Start: "start",
}

// Events lists every event: the ones above in their order, then the
// events of trust (Complete, FailBlocked).
var Events = []Event{Claim, Withdraw, Succeed, Wait, AskPerson, Fail, Retry, TimeOut, Cancel,
	Interrupt, Iterate, Stop, Queue, Release, Restart, BranchPass, BranchFail, Pause, Prepare, Start,
	Complete, FailBlocked}

func (e Event) String() string {
	if n, ok := eventNames[e]; ok {
		return n
	}
	return fmt.Sprintf("event(%d)", int(e))
}

// Effects say what the daemon must do once the new state is durably
// written, and only then.
type Effects uint8

const (
	// StartAgent: the claim is on disk; the attempt's agent may start.
	StartAgent Effects = 1 << iota
	// StopAgent: the task's running agent must stop (its process group),
	// and so must its children.
	StopAgent
	// Ended: the task ended; its result goes to its parent, if it has one.
	Ended
	// Unblocked: the task completed; tasks blocked by it may run.
	Unblocked
	// Schedule: the task may run again; the scheduler decides when.
	Schedule
)

// Has reports whether e includes all of f.
func (e Effects) Has(f Effects) bool { return e&f == f }

// ErrIllegal is returned (wrapped in a *TransitionError) for an event that
// cannot happen to a task in its state.
var ErrIllegal = errors.New("illegal transition")

// A TransitionError is an event that cannot happen to a task in its state.
type TransitionError struct {
	From  State
	Event Event
}

func (e *TransitionError) Error() string {
	from := string(e.From)
	if from == "" {
		from = "pending"
	}
	return fmt.Sprintf("a %s task cannot %s", from, e.Event)
}

func (e *TransitionError) Unwrap() error { return ErrIllegal }

// A rule is one event's transitions: the states it may happen in, the
// state it leads to, and what follows.
type rule struct {
	from    []State
	to      State
	effects Effects
}

// rules is the state machine (docs/architecture.md draws it from Next). A starting
// task is a running one whose agent has not started: what may happen to a
// running task may happen to it (its prepared attempt may end without its
// agent: cancelled, paused, taken back, failed to start), and Start moves
// it to running when its agent starts.
var rules = map[Event]rule{
	Claim:      {[]State{None, Retrying, Waiting, NeedsHuman, Paused}, Running, StartAgent},
	Prepare:    {[]State{None, Retrying, Waiting, NeedsHuman, Paused}, Starting, 0},
	Start:      {[]State{Starting}, Running, StartAgent},
	Withdraw:   {[]State{Running, Starting}, None, Schedule},
	Succeed:    {[]State{Running, Starting, NeedsHuman}, Succeeded, Ended | Unblocked},
	Wait:       {[]State{Running, Starting}, Waiting, 0},
	AskPerson:  {[]State{Running, Starting, Waiting}, NeedsHuman, 0},
	Fail:       {[]State{Running, Starting, Waiting, NeedsHuman}, Failed, Ended},
	Retry:      {[]State{Running, Starting}, Retrying, Schedule},
	TimeOut:    {[]State{Running, Starting, Waiting}, TimedOut, Ended},
	Cancel:     {[]State{None, Queued, Starting, Running, Waiting, NeedsHuman, Retrying, Paused}, Cancelled, StopAgent | Ended},
	Interrupt:  {[]State{Running, Starting}, None, Schedule},
	Iterate:    {[]State{Running, Starting}, None, Schedule},
	Stop:       {[]State{Running, Starting}, Stopped, Ended},
	Queue:      {[]State{None}, Queued, 0},
	Release:    {[]State{Queued, Waiting}, None, Schedule},
	Restart:    {[]State{None, Queued, NeedsHuman, Retrying, Paused, Succeeded, Failed, Cancelled, TimedOut, Stopped}, None, Schedule},
	BranchPass: {[]State{Running, Starting}, Succeeded, Ended | Unblocked},
	BranchFail: {[]State{Running, Starting}, Failed, Ended},
	Pause:      {[]State{Running, Starting}, Paused, Schedule},
}

// Next returns the state a task in state from moves to on ev, and the
// effects that follow once that state is written. An event that cannot
// happen in from returns a *TransitionError wrapping ErrIllegal.
func Next(from State, ev Event) (State, Effects, error) {
	r, ok := rules[ev]
	if !ok {
		return from, 0, &TransitionError{From: from, Event: ev}
	}
	for _, s := range r.from {
		if s == from {
			eff := r.effects
			if ev == Cancel && !from.Claimed() {
				eff &^= StopAgent // no job to stop: nothing runs or waits to
			}
			return r.to, eff, nil
		}
	}
	return from, 0, &TransitionError{From: from, Event: ev}
}

// Events of trust (docs/architecture.md): what a person decided in the
// file, and what taskd decides for a task without running it. They are a
// block of their own, numbered apart from the events above.
const (
	// Complete: a person set the task's status to completed while taskd
	// had it in another state; it never runs again.
	Complete Event = iota + 100
	// FailBlocked: a task its blockedBy names failed for good or was
	// cancelled; it fails without running.
	FailBlocked
)

func init() {
	eventNames[Complete] = "complete"
	eventNames[FailBlocked] = "fail (blocker failed)"
	rules[Complete] = rule{[]State{None, Queued, Starting, Running, Waiting, NeedsHuman, Retrying, Paused}, Succeeded, Ended | Unblocked}
	rules[FailBlocked] = rule{[]State{None, Retrying}, Failed, Ended}
}
