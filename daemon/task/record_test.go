package task_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestLoad: metadata.taskd read once into a Spec and a Record, every
// daemon-owned field typed; a field of the wrong type reads as absent.
func TestLoad(t *testing.T) {
	tf := parse(t, withTaskd(`{"prompt":"p","state":"paused","startedAt":"2030-01-02T03:04:05+02:00","attempt":3,
		"runDir":"runs/1/3","finishedAt":"2030-01-02T03:05:00Z","result":{"success":false,"summary":"s"},"failures":1,
		"pauses":2,"pause":{"message":"limit","until":"2030-01-02T04:00:00Z"},"retryAt":"2030-01-02T04:00:00Z",
		"error":"boom","interrupted":4,"interruptedSession":"sess","cancelledBy":"9","cancelCause":"cause",
		"completedBy":"user","failedBlocker":"5","archived":true}`))
	sp, rec, err := task.Load(tf)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Prompt != "p" || sp.State != task.Paused {
		t.Errorf("spec = %+v", sp)
	}
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	want := task.Record{State: task.Paused, StartedAt: at("2030-01-02T03:04:05+02:00"), Attempt: 3, RunDir: "runs/1/3",
		FinishedAt: at("2030-01-02T03:05:00Z"), Failures: 1, Pauses: 2, RetryAt: at("2030-01-02T04:00:00Z"), Error: "boom",
		Interrupted: 4, InterruptedSession: "sess", CancelledBy: "9", CancelCause: "cause", CompletedBy: "user",
		FailedBlocker: "5", Archived: true}
	got := task.Fields(rec)
	if string(taskfile.AppendJSON(nil, got.Result)) != "{\n  \"success\": false,\n  \"summary\": \"s\"\n}" {
		t.Errorf("result = %s", taskfile.AppendJSON(nil, got.Result))
	}
	if m, _ := got.Pause.String("message"); m != "limit" {
		t.Errorf("pause = %s", taskfile.AppendJSON(nil, got.Pause))
	}
	got.Result, got.Pause = nil, nil
	if !got.StartedAt.Equal(want.StartedAt) {
		t.Errorf("startedAt = %v, want %v", got.StartedAt, want.StartedAt)
	}
	got.StartedAt, want.StartedAt = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("record =\n%+v\nwant\n%+v", got, want)
	}

	bad := parse(t, withTaskd(`{"attempt":"three","startedAt":7,"result":"text"}`))
	if got := task.Fields(task.RecordOf(bad)); !reflect.DeepEqual(got, task.Record{}) {
		t.Errorf("record of wrong types = %+v, want the zero Record", got)
	}
	if got := task.Fields(task.RecordOf(nil)); !reflect.DeepEqual(got, task.Record{}) {
		t.Errorf("record of nil = %+v", got)
	}
}

// TestStore: a Record is written back touching only the fields that
// changed: unknown keys, the order of keys and the bytes of unchanged
// values (a time in another zone, a number as written) survive; new
// fields are appended, cleared ones removed; the state is left to Apply.
func TestStore(t *testing.T) {
	const file = `{
  "id": "1",
  "subject": "s",
  "description": "",
  "activeForm": "",
  "status": "in_progress",
  "x-person": "keep me",
  "blocks": [],
  "blockedBy": [],
  "metadata": {
    "before": 1,
    "taskd": {
      "mine": {
        "a": 1.50
      },
      "startedAt": "2030-01-02T05:04:05+02:00",
      "error": "old",
      "state": "running",
      "attempt": 2,
      "other": [
        1
      ]
    },
    "after": true
  }
}`
	finished := time.Date(2030, 1, 2, 3, 5, 0, 0, time.UTC)
	tests := []struct {
		name   string
		change func(*task.Record)
		want   string // metadata.taskd after Store
	}{
		{"nothing", func(*task.Record) {}, `{
  "mine": {
    "a": 1.50
  },
  "startedAt": "2030-01-02T05:04:05+02:00",
  "error": "old",
  "state": "running",
  "attempt": 2,
  "other": [
    1
  ]
}`},
		{"end", func(r *task.Record) {
			r.State = task.Failed // not Store's to write
			r.FinishedAt = finished
			r.Result = task.Object(map[string]any{"success": false, "summary": "no"})
			r.Error = ""
			r.Failures = 1
		}, `{
  "mine": {
    "a": 1.50
  },
  "startedAt": "2030-01-02T05:04:05+02:00",
  "state": "running",
  "attempt": 2,
  "other": [
    1
  ],
  "finishedAt": "2030-01-02T03:05:00Z",
  "result": {
    "success": false,
    "summary": "no"
  },
  "failures": 1
}`},
		{"next attempt", func(r *task.Record) {
			r.Attempt = 3
			r.StartedAt = finished
			r.Error = "new"
		}, `{
  "mine": {
    "a": 1.50
  },
  "startedAt": "2030-01-02T03:05:00Z",
  "error": "new",
  "state": "running",
  "attempt": 3,
  "other": [
    1
  ]
}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tf, err := taskfile.Parse([]byte(file), "1.json", "1")
			if err != nil {
				t.Fatal(err)
			}
			rec := task.RecordOf(tf)
			tt.change(&rec)
			task.Store(tf, rec)
			got := string(taskfile.AppendJSON(nil, tf.Metadata.Object("taskd")))
			if got != tt.want {
				t.Errorf("metadata.taskd =\n%s\nwant\n%s", got, tt.want)
			}
			out := string(tf.Marshal())
			for _, keep := range []string{`"x-person": "keep me"`, `"before": 1`, `"after": true`} {
				if !strings.Contains(out, keep) {
					t.Errorf("file lost %s:\n%s", keep, out)
				}
			}
			if tt.name == "nothing" && out != file {
				t.Errorf("an unchanged record rewrote the file:\n%s\nwant\n%s", out, file)
			}
		})
	}
}

// TestApply: one call moves the state and writes the whole record the
// event leaves; an illegal event changes nothing; End records the end of
// an attempt from running whatever state the file holds.
func TestApply(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name       string
		file       string
		end        bool
		ev         task.Event
		rec        func(task.Record) task.Record
		wantErr    error
		wantState  task.State
		wantStatus string
		want       string // metadata.taskd after
	}{
		{"claim", `{"prompt":"p","retryAt":"2030-01-01T00:00:00Z"}`, false, task.Claim, func(r task.Record) task.Record {
			r.StartedAt, r.Attempt, r.RetryAt = now, 1, time.Time{}
			return r
		}, nil, task.Running, taskfile.StatusInProgress,
			`{"prompt":"p","state":"running","startedAt":"2030-01-02T03:04:05Z","attempt":1}`},
		{"retry", `{"prompt":"p","state":"running","attempt":1}`, false, task.Retry, func(r task.Record) task.Record {
			r.FinishedAt, r.Failures, r.Error, r.RetryAt = now, 1, "boom", now.Add(time.Second)
			return r
		}, nil, task.Retrying, taskfile.StatusPending,
			`{"prompt":"p","state":"retrying","attempt":1,"finishedAt":"2030-01-02T03:04:05Z","failures":1,"retryAt":"2030-01-02T03:04:06Z","error":"boom"}`},
		{"illegal", `{"prompt":"p","state":"succeeded"}`, false, task.Fail, func(r task.Record) task.Record {
			r.Error = "no"
			return r
		}, task.ErrIllegal, task.Succeeded, taskfile.StatusPending, `{"prompt":"p","state":"succeeded"}`},
		{"end over a rewritten state", `{"prompt":"p","state":"needs_human"}`, true, task.Succeed, func(r task.Record) task.Record {
			r.FinishedAt = now
			return r
		}, nil, task.Succeeded, taskfile.StatusCompleted,
			`{"prompt":"p","state":"succeeded","finishedAt":"2030-01-02T03:04:05Z"}`},
		{"a value the record cannot read is kept by a move", `{"state":"running","finishedAt":"t","attempt":"two","error":"","other":1}`, false, task.Wait, func(r task.Record) task.Record {
			return r
		}, nil, task.Waiting, taskfile.StatusInProgress, `{"state":"waiting","finishedAt":"t","attempt":"two","error":"","other":1}`},
		{"and dropped once the record changes", `{"state":"running","finishedAt":"t","attempt":"two","error":"","other":1}`, false, task.Wait, func(r task.Record) task.Record {
			r.Failures = 1
			return r
		}, nil, task.Waiting, taskfile.StatusInProgress, `{"state":"waiting","other":1,"failures":1}`},
		{"or given a value", `{"state":"running","finishedAt":"t","attempt":"two"}`, false, task.Iterate, func(r task.Record) task.Record {
			r.FinishedAt, r.Attempt = now, 2
			return r
		}, nil, task.None, taskfile.StatusPending, `{"finishedAt":"2030-01-02T03:04:05Z","attempt":2}`},
		{"a record changed in place", `{"state":"paused","pause":{"until":"x"}}`, false, task.Claim, func(r task.Record) task.Record {
			r.Pause.Set("until", "y")
			return r
		}, nil, task.Running, taskfile.StatusInProgress, `{"state":"running","pause":{"until":"y"}}`},
		{"withdraw", `{"prompt":"p","state":"starting","startedAt":"2030-01-01T00:00:00Z","attempt":1}`, false, task.Withdraw, func(r task.Record) task.Record {
			r.StartedAt, r.Attempt = time.Time{}, 0
			return r
		}, nil, task.None, taskfile.StatusPending, `{"prompt":"p"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tf := parse(t, withTaskd(tt.file))
			tf.Status = taskfile.StatusPending
			apply := task.Apply
			if tt.end {
				apply = task.End
			}
			_, err := apply(tf, tt.ev, tt.rec(task.RecordOf(tf)))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got := task.Of(tf); got != tt.wantState {
				t.Errorf("state = %q, want %q", got, tt.wantState)
			}
			if tf.Status != tt.wantStatus {
				t.Errorf("status = %q, want %q", tf.Status, tt.wantStatus)
			}
			got := string(compact(taskfile.AppendJSON(nil, tf.Metadata.Object("taskd"))))
			if got != tt.want {
				t.Errorf("metadata.taskd = %s\nwant            %s", got, tt.want)
			}
		})
	}
}

// compact strips the layout AppendJSON adds (the test's values hold no
// spaces or newlines of their own).
func compact(b []byte) string {
	return strings.NewReplacer("\n", "", " ", "").Replace(string(b))
}

// TestWithdrawClaim: a claim is taken back through the table: the bytes
// before it may be put back only over a claimed task and to a state a
// claim is made from; Unclaim puts back the claim's fields, keeping what
// was written since.
func TestWithdrawClaim(t *testing.T) {
	before := parse(t, withTaskd(`{"prompt":"p","state":"retrying","attempt":1,"retryAt":"2030-01-01T00:00:00Z","finishedAt":"2029-12-31T23:59:00Z"}`))
	claimed := parse(t, withTaskd(`{"prompt":"p","state":"starting","attempt":2,"startedAt":"2030-01-01T00:00:01Z","runDir":"r/2","other":true}`))
	if err := task.CheckUndo(claimed, before); err != nil {
		t.Errorf("CheckUndo(starting over retrying) = %v", err)
	}
	ended := parse(t, withTaskd(`{"prompt":"p","state":"succeeded"}`))
	if err := task.CheckUndo(ended, before); !errors.Is(err, task.ErrIllegal) {
		t.Errorf("CheckUndo(over succeeded) = %v, want ErrIllegal", err)
	}
	if err := task.CheckUndo(claimed, ended); !errors.Is(err, task.ErrIllegal) {
		t.Errorf("CheckUndo(back to succeeded) = %v, want ErrIllegal", err)
	}
	if _, err := task.Unclaim(claimed, task.RecordOf(before)); err != nil {
		t.Fatal(err)
	}
	got := compact(taskfile.AppendJSON(nil, claimed.Metadata.Object("taskd")))
	want := `{"prompt":"p","attempt":1,"other":true,"finishedAt":"2029-12-31T23:59:00Z","retryAt":"2030-01-01T00:00:00Z"}`
	if got != want {
		t.Errorf("after Unclaim: %s\nwant         %s", got, want)
	}
}
