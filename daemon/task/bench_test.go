package task_test

import (
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// succeededTask is a task of the exec profile as the daemon leaves it
// once its attempt has succeeded: the file the loop and the jobs read
// the record of most often.
const succeededTask = `{
  "id": "1",
  "subject": "c",
  "description": "",
  "activeForm": "c",
  "status": "completed",
  "owner": "taskd",
  "blocks": [],
  "blockedBy": [],
  "metadata": {
    "taskd": {
      "agent": "exec",
      "prompt": "true",
      "state": "succeeded",
      "startedAt": "2026-11-27T13:21:46.871326883Z",
      "attempt": 1,
      "runDir": ".taskd/runs/1/1",
      "finishedAt": "2026-11-27T13:21:46.878491603Z",
      "result": {
        "exitCode": 0,
        "runDir": ".taskd/runs/1/1",
        "success": true,
        "summary": ""
      }
    }
  }
}`

// BenchmarkRecordOf: a task's record read from its parsed file, which
// the daemon does many times per task (every job and every view of a
// task reads it); and the same record changed and stored back, as each
// state write does.
func BenchmarkRecordOf(b *testing.B) {
	t, err := taskfile.Parse([]byte(succeededTask), "1.json", "1")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r := task.RecordOf(t); r.State != task.Succeeded {
				b.Fatalf("state %q, want %q", r.State, task.Succeeded)
			}
		}
	})
	b.Run("field", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if w := task.FieldOf(t, func(r *task.Record) **taskfile.Object { return &r.Workspace }); w != nil {
				b.Fatalf("workspace %v, want none", w)
			}
		}
	})
	b.Run("store", func(b *testing.B) {
		at := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
		b.ReportAllocs()
		for b.Loop() {
			c := t.Clone()
			r := task.RecordOf(c)
			r.Attempt++
			r.StartedAt = at
			task.Store(c, r)
		}
	})
}
