package job

import (
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
)

// TestEndOf: how each outcome of an attempt moves its task and what is
// logged, the finish path's table.
func TestEndOf(t *testing.T) {
	ok, failed := agent.Result{Success: true}, agent.Result{}
	denied := agent.Result{Denials: []agent.Denial{{Tool: "Write"}}}
	tests := []struct {
		name           string
		out            agent.Outcome
		res            agent.Result
		waiting, retry bool
		want           ending
		failOnDenied   bool
	}{
		{"success", agent.Finished, ok, false, false, ending{task.Succeed, eventlog.TaskSucceeded}, false},
		{"success with children running", agent.Finished, ok, true, false, ending{task.Wait, eventlog.TaskWaiting}, false},
		{"failure", agent.Finished, failed, false, false, ending{task.Fail, eventlog.TaskFailed}, false},
		{"failure with retries left", agent.Finished, failed, false, true, ending{task.Retry, eventlog.TaskFailed}, false},
		{"timed out", agent.TimedOut, failed, false, false, ending{task.TimeOut, eventlog.TaskTimedOut}, false},
		{"timed out with retries left", agent.TimedOut, failed, false, true, ending{task.Retry, eventlog.TaskTimedOut}, false},
		{"cancelled", agent.Cancelled, failed, false, false, ending{task.Cancel, eventlog.TaskCancelled}, false},
		{"interrupted", agent.Interrupted, failed, false, false, ending{task.Interrupt, eventlog.TaskInterrupted}, false},
		{"not started", agent.NotStarted, failed, false, false, ending{task.Fail, eventlog.TaskFailed}, false},
		{"usage limit", agent.Paused, failed, false, true, ending{task.Pause, eventlog.TaskPaused}, false},
		{"over budget", agent.OverBudget, failed, false, false, ending{task.Fail, eventlog.TaskFailed}, false},
		{"denied tools ask a person", agent.Finished, denied, false, false, ending{task.AskPerson, eventlog.TaskNeedsHuman}, false},
		{"denied tools fail if the task says so", agent.Finished, denied, false, false, ending{task.Fail, eventlog.TaskFailed}, true},
	}
	for _, tt := range tests {
		if got := endOf(tt.out, tt.res, tt.waiting, tt.retry, !tt.failOnDenied); got != tt.want {
			t.Errorf("%s: endOf = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want time.Duration
	}{{1, time.Second}, {2, 2 * time.Second}, {4, 8 * time.Second}, {9, 256 * time.Second}, {10, 5 * time.Minute}, {40, 5 * time.Minute}} {
		if got := Backoff(tt.n); got != tt.want {
			t.Errorf("Backoff(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
}

func TestCancellable(t *testing.T) {
	for _, s := range task.States {
		want := s == task.None || s == task.Queued || s == task.Retrying || s == task.NeedsHuman || s == task.Waiting || s == task.Paused
		if got := Cancellable(s); got != want {
			t.Errorf("Cancellable(%q) = %v, want %v", s, got, want)
		}
	}
}
