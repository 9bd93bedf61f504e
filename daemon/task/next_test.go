package task_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// legal is every transition the state machine allows, with its effects.
var legal = []struct {
	from task.State
	ev   task.Event
	to   task.State
	eff  task.Effects
}{
	{task.None, task.Claim, task.Running, task.StartAgent},
	{task.Retrying, task.Claim, task.Running, task.StartAgent},
	{task.Waiting, task.Claim, task.Running, task.StartAgent},
	{task.NeedsHuman, task.Claim, task.Running, task.StartAgent},
	{task.Paused, task.Claim, task.Running, task.StartAgent},
	{task.Running, task.Withdraw, task.None, task.Schedule},
	{task.Running, task.Succeed, task.Succeeded, task.Ended | task.Unblocked},
	{task.NeedsHuman, task.Succeed, task.Succeeded, task.Ended | task.Unblocked},
	{task.Running, task.Wait, task.Waiting, 0},
	{task.Running, task.AskPerson, task.NeedsHuman, 0},
	{task.Waiting, task.AskPerson, task.NeedsHuman, 0},
	{task.Running, task.Fail, task.Failed, task.Ended},
	{task.Waiting, task.Fail, task.Failed, task.Ended},
	{task.NeedsHuman, task.Fail, task.Failed, task.Ended},
	{task.Running, task.Retry, task.Retrying, task.Schedule},
	{task.Running, task.TimeOut, task.TimedOut, task.Ended},
	{task.Waiting, task.TimeOut, task.TimedOut, task.Ended},
	{task.None, task.Cancel, task.Cancelled, task.Ended},
	{task.Queued, task.Cancel, task.Cancelled, task.Ended},
	{task.Running, task.Cancel, task.Cancelled, task.StopAgent | task.Ended},
	{task.Waiting, task.Cancel, task.Cancelled, task.Ended},
	{task.NeedsHuman, task.Cancel, task.Cancelled, task.Ended},
	{task.Retrying, task.Cancel, task.Cancelled, task.Ended},
	{task.Paused, task.Cancel, task.Cancelled, task.Ended},
	{task.Running, task.Interrupt, task.None, task.Schedule},
	{task.Running, task.Iterate, task.None, task.Schedule},
	{task.Running, task.Stop, task.Stopped, task.Ended},
	{task.None, task.Queue, task.Queued, 0},
	{task.Queued, task.Release, task.None, task.Schedule},
	{task.Waiting, task.Release, task.None, task.Schedule},
	{task.None, task.Restart, task.None, task.Schedule},
	{task.Queued, task.Restart, task.None, task.Schedule},
	{task.NeedsHuman, task.Restart, task.None, task.Schedule},
	{task.Retrying, task.Restart, task.None, task.Schedule},
	{task.Paused, task.Restart, task.None, task.Schedule},
	{task.Succeeded, task.Restart, task.None, task.Schedule},
	{task.Failed, task.Restart, task.None, task.Schedule},
	{task.Cancelled, task.Restart, task.None, task.Schedule},
	{task.TimedOut, task.Restart, task.None, task.Schedule},
	{task.Stopped, task.Restart, task.None, task.Schedule},
	{task.Running, task.BranchPass, task.Succeeded, task.Ended | task.Unblocked},
	{task.Running, task.BranchFail, task.Failed, task.Ended},
	{task.Running, task.Pause, task.Paused, task.Schedule},
	// Claimed ahead of a slot: starting, then running when the agent
	// starts; meanwhile anything that may end a running task may end it.
	{task.None, task.Prepare, task.Starting, 0},
	{task.Retrying, task.Prepare, task.Starting, 0},
	{task.Waiting, task.Prepare, task.Starting, 0},
	{task.NeedsHuman, task.Prepare, task.Starting, 0},
	{task.Paused, task.Prepare, task.Starting, 0},
	{task.Starting, task.Start, task.Running, task.StartAgent},
	{task.Starting, task.Withdraw, task.None, task.Schedule},
	{task.Starting, task.Succeed, task.Succeeded, task.Ended | task.Unblocked},
	{task.Starting, task.Wait, task.Waiting, 0},
	{task.Starting, task.AskPerson, task.NeedsHuman, 0},
	{task.Starting, task.Fail, task.Failed, task.Ended},
	{task.Starting, task.Retry, task.Retrying, task.Schedule},
	{task.Starting, task.TimeOut, task.TimedOut, task.Ended},
	{task.Starting, task.Cancel, task.Cancelled, task.StopAgent | task.Ended},
	{task.Starting, task.Interrupt, task.None, task.Schedule},
	{task.Starting, task.Iterate, task.None, task.Schedule},
	{task.Starting, task.Stop, task.Stopped, task.Ended},
	{task.Starting, task.BranchPass, task.Succeeded, task.Ended | task.Unblocked},
	{task.Starting, task.BranchFail, task.Failed, task.Ended},
	{task.Starting, task.Pause, task.Paused, task.Schedule},
}

// legalTrust are the transitions of the trust events.
var legalTrust = []struct {
	from task.State
	ev   task.Event
	to   task.State
	eff  task.Effects
}{
	{task.None, task.Complete, task.Succeeded, task.Ended | task.Unblocked},
	{task.Queued, task.Complete, task.Succeeded, task.Ended | task.Unblocked},
	{task.Running, task.Complete, task.Succeeded, task.Ended | task.Unblocked},
	{task.Starting, task.Complete, task.Succeeded, task.Ended | task.Unblocked},
	{task.Waiting, task.Complete, task.Succeeded, task.Ended | task.Unblocked},
	{task.NeedsHuman, task.Complete, task.Succeeded, task.Ended | task.Unblocked},
	{task.Retrying, task.Complete, task.Succeeded, task.Ended | task.Unblocked},
	{task.Paused, task.Complete, task.Succeeded, task.Ended | task.Unblocked},
	{task.None, task.FailBlocked, task.Failed, task.Ended},
	{task.Retrying, task.FailBlocked, task.Failed, task.Ended},
}

func init() {
	legal = append(legal, legalTrust...)
	events = append(events, task.Complete, task.FailBlocked)
}

var events = []task.Event{task.Claim, task.Withdraw, task.Succeed, task.Wait, task.AskPerson, task.Fail,
	task.Retry, task.TimeOut, task.Cancel, task.Interrupt, task.Iterate, task.Stop, task.Queue,
	task.Release, task.Restart, task.BranchPass, task.BranchFail, task.Pause, task.Prepare, task.Start}

// TestEvents: task.Events lists every event, each once, in order.
func TestEvents(t *testing.T) {
	if got, want := fmt.Sprint(task.Events), fmt.Sprint(events); got != want {
		t.Errorf("task.Events = %s, want %s", got, want)
	}
}

// TestNext checks every pair of a state and an event: the legal ones move
// as the table says, every other one is an error wrapping ErrIllegal that
// leaves the state as it was.
func TestNext(t *testing.T) {
	type key struct {
		from task.State
		ev   task.Event
	}
	want := map[key]int{}
	for i, tt := range legal {
		want[key{tt.from, tt.ev}] = i
	}
	for _, from := range task.States {
		for _, ev := range events {
			got, eff, err := task.Next(from, ev)
			i, ok := want[key{from, ev}]
			if !ok {
				if !errors.Is(err, task.ErrIllegal) {
					t.Errorf("Next(%q, %v) = %q, %v, %v; want ErrIllegal", from, ev, got, eff, err)
				}
				if got != from {
					t.Errorf("Next(%q, %v) refused but moved to %q", from, ev, got)
				}
				continue
			}
			tt := legal[i]
			if err != nil || got != tt.to || eff != tt.eff {
				t.Errorf("Next(%q, %v) = %q, %b, %v; want %q, %b", from, ev, got, eff, err, tt.to, tt.eff)
			}
		}
	}
}

// TestNext_EndedStaysEnded: an ended task does nothing more on its own;
// only a person's restart moves it.
func TestNext_EndedStaysEnded(t *testing.T) {
	for _, from := range task.States {
		if !from.Ended() {
			continue
		}
		for _, ev := range events {
			if _, _, err := task.Next(from, ev); err == nil && ev != task.Restart {
				t.Errorf("an ended task (%q) moved on %v", from, ev)
			}
		}
	}
}

// TestNext_StartOnlyOnClaim: only a claim lets an agent start, or the
// start of an attempt claimed ahead of its slot (never its preparation).
func TestNext_StartOnlyOnClaim(t *testing.T) {
	for _, tt := range legal {
		if got, want := tt.eff.Has(task.StartAgent), tt.ev == task.Claim || tt.ev == task.Start; got != want {
			t.Errorf("%q on %v: StartAgent %v, want %v", tt.from, tt.ev, got, want)
		}
	}
}

func TestMove(t *testing.T) {
	tests := []struct {
		name       string
		state      task.State
		status     string
		ev         task.Event
		wantState  string
		wantStatus string
		wantErr    bool
	}{
		{"claim", task.None, taskfile.StatusPending, task.Claim, "running", taskfile.StatusInProgress, false},
		{"succeed", task.Running, taskfile.StatusInProgress, task.Succeed, "succeeded", taskfile.StatusCompleted, false},
		{"interrupt clears the state", task.Running, taskfile.StatusInProgress, task.Interrupt, "", taskfile.StatusPending, false},
		{"a failed branch is not completed", task.Running, taskfile.StatusInProgress, task.BranchFail, "failed", taskfile.StatusPending, false},
		{"a stopped workflow keeps its status", task.Running, taskfile.StatusInProgress, task.Stop, "stopped", taskfile.StatusInProgress, false},
		{"a paused task waits pending", task.Running, taskfile.StatusInProgress, task.Pause, "paused", taskfile.StatusPending, false},
		{"a paused task resumes", task.Paused, taskfile.StatusPending, task.Claim, "running", taskfile.StatusInProgress, false},
		{"claimed ahead of a slot, it is still pending", task.None, taskfile.StatusPending, task.Prepare, "starting", taskfile.StatusPending, false},
		{"its agent starts", task.Starting, taskfile.StatusPending, task.Start, "running", taskfile.StatusInProgress, false},
		{"a running task does not start again", task.Running, taskfile.StatusInProgress, task.Start, "running", taskfile.StatusInProgress, true},
		{"only a running task pauses", task.Waiting, taskfile.StatusInProgress, task.Pause, "waiting", taskfile.StatusInProgress, true},
		{"illegal", task.Succeeded, taskfile.StatusCompleted, task.Wait, "succeeded", taskfile.StatusCompleted, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk := &taskfile.Task{ID: "7", Status: tt.status}
			if tt.state != task.None {
				tk.EnsureMetadata().EnsureObject("taskd").Set("state", string(tt.state))
			}
			_, err := task.Move(tk, tt.ev)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Move = %v, want error %v", err, tt.wantErr)
			}
			got, has := tk.Metadata.Object("taskd").String("state")
			if got != tt.wantState || has != (tt.wantState != "") {
				t.Errorf("state = %q (present %v), want %q", got, has, tt.wantState)
			}
			if tk.Status != tt.wantStatus {
				t.Errorf("status = %q, want %q", tk.Status, tt.wantStatus)
			}
		})
	}
}

// TestEnd: the end of an attempt that ran is recorded whatever state
// another writer left in the file; Move refuses the same event.
func TestEnd(t *testing.T) {
	tk := &taskfile.Task{ID: "7", Status: taskfile.StatusPending} // rewritten under the agent
	if _, err := task.Move(tk, task.Succeed); !errors.Is(err, task.ErrIllegal) {
		t.Fatalf("Move(pending, succeed) = %v, want ErrIllegal", err)
	}
	eff, err := task.End(tk, task.Succeed, task.RecordOf(tk))
	if err != nil || task.Of(tk) != task.Succeeded || tk.Status != taskfile.StatusCompleted || !eff.Has(task.Ended) {
		t.Errorf("End(succeed) = %b, %v; state %q status %q", eff, err, task.Of(tk), tk.Status)
	}
}
