package job_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/job/jobtest"
	"github.com/taskd/taskd/daemon/task"
)

// TestSettle_CancelBeforeBlocker: a task whose blocker was cancelled fails
// for it only when no cancel reaches the task itself. When one does — its
// own cancel the loop had not seen, a cancelled task above it, or the
// cancelled origin of the return chain it is a step of — Settle leaves it
// alone (job.ErrNotRunnable) for the cancel to end it, as cancelled.
func TestSettle_CancelBeforeBlocker(t *testing.T) {
	const blocker = `{"id":"2","subject":"s","status":"pending","owner":"taskd","metadata":{"taskd":{"state":"cancelled"}}}`
	for _, tt := range []struct {
		name   string
		task   string            // task 3's metadata.taskd; it is blocked by 2
		others map[string]string // other tasks' metadata.taskd
		want   task.State        // "" for left alone
	}{
		{name: "blocker only", task: `{}`, want: task.Failed},
		{name: "own cancel", task: `{"cancel":true}`},
		{name: "parent cancelled", task: `{"parent":"1"}`, others: map[string]string{"1": `{"state":"cancelled"}`}},
		{name: "parent cancelling", task: `{"parent":"1"}`, others: map[string]string{"1": `{"state":"waiting","cancel":true}`}},
		{name: "chain origin cancelled", task: `{"returnOf":"1","previous":"2"}`, others: map[string]string{"1": `{"state":"cancelled"}`}},
		{name: "chain origin cancelling", task: `{"returnOf":"1","previous":"2"}`, others: map[string]string{"1": `{"state":"waiting","cancel":true}`}},
		{name: "chain origin succeeded", task: `{"returnOf":"1","previous":"2"}`, others: map[string]string{"1": `{"state":"succeeded"}`}, want: task.Failed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := jobtest.New(t, jobtest.Options{})
			h.Put("2", blocker)
			for id, td := range tt.others {
				h.Put(id, `{"id":"`+id+`","subject":"s","status":"pending","owner":"taskd","metadata":{"taskd":`+td+`}}`)
			}
			h.Put("3", `{"id":"3","subject":"s","status":"pending","owner":"taskd","blockedBy":["2"],"metadata":{"taskd":`+tt.task+`}}`)
			_, err := h.Job("3", job.Settle).Settle(context.Background())
			got := task.Of(h.Read("3"))
			if tt.want == "" {
				if !errors.Is(err, job.ErrNotRunnable) || got != task.None {
					t.Errorf("Settle = %v, state %q; want it left alone (ErrNotRunnable), pending", err, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Settle = %v, state %q; want %q", err, got, tt.want)
			}
			if e := h.Taskd("3"); !strings.Contains(e, "which it is blocked by, was cancelled") {
				t.Errorf("metadata.taskd = %s, want the blocker named as the reason", e)
			}
		})
	}
}
