package job_test

import (
	"context"
	"testing"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/job/jobtest"
	"github.com/taskd/taskd/daemon/task"
)

// TestFinishWaiting: a success recorded by Finish waits only for what is
// left to wait for when it is written; one recorded by FinishWaiting, for
// a caller that found the task must wait, waits even when all of it has
// ended since (here the task's only parallel item, which had succeeded).
func TestFinishWaiting(t *testing.T) {
	for _, tt := range []struct {
		name   string
		finish func(context.Context, *job.Job, task.Spec, agent.Result) error
		want   task.State
	}{
		{"Finish", func(ctx context.Context, j *job.Job, sp task.Spec, res agent.Result) error {
			_, err := j.Finish(ctx, sp, res, agent.Finished, nil)
			return err
		}, task.Succeeded},
		{"FinishWaiting", func(ctx context.Context, j *job.Job, sp task.Spec, res agent.Result) error {
			_, err := j.FinishWaiting(ctx, sp, res, nil)
			return err
		}, task.Waiting},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := jobtest.New(t, jobtest.Options{})
			h.Put("1", `{"id":"1","subject":"s","status":"in_progress","owner":"taskd","metadata":{"taskd":{"agent":"exec","prompt":"true","state":"running","attempt":1,"children":{"parallel":["2"]}}}}`)
			h.Put("2", `{"id":"2","subject":"item","status":"completed","owner":"taskd","metadata":{"taskd":{"agent":"exec","prompt":"true","parent":"1","parallelItem":true,"state":"succeeded","attempt":1}}}`)
			sp, err := task.ReadSpec(h.Read("1"))
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.finish(t.Context(), h.Job("1", job.Run), sp, agent.Result{Success: true}); err != nil {
				t.Fatal(err)
			}
			if got := task.Of(h.Read("1")); got != tt.want {
				t.Errorf("the task is %q, want %q\n%s", got, tt.want, h.Taskd("1"))
			}
		})
	}
}
