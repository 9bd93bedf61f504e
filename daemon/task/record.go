package task

import (
	"bytes"
	"time"

	"github.com/taskd/taskd/taskfile"
)

// A Record is the part of a task's metadata.taskd that only the daemon
// writes (docs/tasks.md, "What taskd writes"): where taskd is with the
// task and what its latest attempt left. It is read once per observation
// (Load), changed as a value, and written back by one writer in this
// package: Apply, which also moves the state, or Store for the fields
// alone. The zero value of a field means "absent from the file".
type Record struct {
	State      State     // state (moved only by Apply)
	StartedAt  time.Time // startedAt: when the latest attempt started
	Attempt    int       // attempt: the latest attempt's number
	RunDir     string    // runDir: its run folder, relative to the list
	FinishedAt time.Time // finishedAt: when the task last ended
	// Result is the short form of the latest attempt's result
	// (result, an object).
	Result   *taskfile.Object
	Failures int // failures so far
	// Pauses counts the usage-limit pauses in a row; Pause is the latest
	// one (an object: message, profile, resetsAt, until, sessionId): the
	// task's hold until RetryAt.
	Pauses int
	Pause  *taskfile.Object
	// RetryAt is when a retrying or paused task runs again.
	RetryAt time.Time
	// Error is why the task failed, was cancelled or waits.
	Error string
	// Interrupted counts the attempts a stopping daemon interrupted;
	// InterruptedSession is the session the next attempt resumes.
	Interrupted        int
	InterruptedSession string
	// CancelledBy is the ancestor whose cancel reached the task;
	// CancelCause what it was doing.
	CancelledBy string
	CancelCause string
	// CompletedBy is "user" when a person completed the task.
	CompletedBy string
	// FailedBlocker is the task in blockedBy whose failure failed it.
	FailedBlocker string
	// Archived: an ended child kept on disk, no longer counted by its
	// parent (Archive).
	Archived bool
}

// Keys are the metadata.taskd keys of a Record: written only by this
// package (TestDaemonFieldsWrittenOnlyHere), in the order Store appends
// the ones a file lacks.
var Keys = []string{
	"state", "startedAt", "attempt", "runDir", "finishedAt", "result", "failures",
	"pauses", "pause", "retryAt", "error", "interrupted", "interruptedSession",
	"cancelledBy", "cancelCause", "completedBy", "failedBlocker", "archived",
}

// Load reads task t's metadata.taskd once: what it asks for (ReadSpec)
// and the daemon's record of it (RecordOf).
func Load(t *taskfile.Task) (Spec, Record, error) {
	s, err := ReadSpec(t)
	if err != nil {
		return s, Record{}, err
	}
	return s, RecordOf(t), nil
}

// RecordOf returns the record task t's file holds. A field of the wrong
// type reads as absent (ReadSpec reports the ones a person may get wrong).
func RecordOf(t *taskfile.Task) Record {
	var r Record
	if t == nil {
		return r
	}
	m := t.Metadata.Object("taskd")
	if m == nil {
		return r
	}
	st, _ := m.String("state")
	r.State = State(st)
	r.StartedAt = timeOf(m, "startedAt")
	r.Attempt = intOf(m, "attempt")
	r.RunDir, _ = m.String("runDir")
	r.FinishedAt = timeOf(m, "finishedAt")
	r.Result = m.Object("result")
	r.Failures = intOf(m, "failures")
	r.Pauses = intOf(m, "pauses")
	r.Pause = m.Object("pause")
	r.RetryAt = timeOf(m, "retryAt")
	r.Error, _ = m.String("error")
	r.Interrupted = intOf(m, "interrupted")
	r.InterruptedSession, _ = m.String("interruptedSession")
	r.CancelledBy, _ = m.String("cancelledBy")
	r.CancelCause, _ = m.String("cancelCause")
	r.CompletedBy, _ = m.String("completedBy")
	r.FailedBlocker, _ = m.String("failedBlocker")
	r.Archived, _ = m.Bool("archived")
	return r
}

// Store writes rec's fields, its state aside (Apply moves it), into task
// t's metadata.taskd: only the fields that differ from what the file
// holds are touched, so the file's other keys, their order and the bytes
// of unchanged values stay as they were; a field set anew is appended, a
// field cleared (its zero value) is removed.
func Store(t *taskfile.Task, rec Record) {
	cur := RecordOf(t)
	var m *taskfile.Object
	put := func(key string, v any, zero bool) {
		if m == nil {
			m = Meta(t)
		}
		if zero {
			m.Delete(key)
		} else {
			m.Set(key, v)
		}
	}
	if !rec.StartedAt.Equal(cur.StartedAt) {
		put("startedAt", Stamp(rec.StartedAt), rec.StartedAt.IsZero())
	}
	if rec.Attempt != cur.Attempt {
		put("attempt", rec.Attempt, rec.Attempt == 0)
	}
	if rec.RunDir != cur.RunDir {
		put("runDir", rec.RunDir, rec.RunDir == "")
	}
	if !rec.FinishedAt.Equal(cur.FinishedAt) {
		put("finishedAt", Stamp(rec.FinishedAt), rec.FinishedAt.IsZero())
	}
	if !sameObject(rec.Result, cur.Result) {
		put("result", rec.Result, rec.Result == nil)
	}
	if rec.Failures != cur.Failures {
		put("failures", rec.Failures, rec.Failures == 0)
	}
	if rec.Pauses != cur.Pauses {
		put("pauses", rec.Pauses, rec.Pauses == 0)
	}
	if !sameObject(rec.Pause, cur.Pause) {
		put("pause", rec.Pause, rec.Pause == nil)
	}
	if !rec.RetryAt.Equal(cur.RetryAt) {
		put("retryAt", Stamp(rec.RetryAt), rec.RetryAt.IsZero())
	}
	if rec.Error != cur.Error {
		put("error", rec.Error, rec.Error == "")
	}
	if rec.Interrupted != cur.Interrupted {
		put("interrupted", rec.Interrupted, rec.Interrupted == 0)
	}
	for _, s := range []struct{ key, now, was string }{
		{"interruptedSession", rec.InterruptedSession, cur.InterruptedSession},
		{"cancelledBy", rec.CancelledBy, cur.CancelledBy},
		{"cancelCause", rec.CancelCause, cur.CancelCause},
		{"completedBy", rec.CompletedBy, cur.CompletedBy},
		{"failedBlocker", rec.FailedBlocker, cur.FailedBlocker},
	} {
		if s.now != s.was {
			put(s.key, s.now, s.now == "")
		}
	}
	if rec.Archived != cur.Archived {
		put("archived", true, !rec.Archived)
	}
}

// Object returns v (a map, a struct's JSON form already parsed, or an
// *Object) as the object a Record holds: a map's keys sorted, as Set
// writes them.
func Object(v any) *taskfile.Object {
	o := taskfile.NewObject()
	o.Set("v", v)
	return o.Object("v")
}

func sameObject(a, b *taskfile.Object) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a == b || bytes.Equal(taskfile.AppendJSON(nil, a), taskfile.AppendJSON(nil, b))
}

func timeOf(m *taskfile.Object, key string) time.Time {
	s, _ := m.String(key)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return at
}

func intOf(m *taskfile.Object, key string) int {
	n, _ := m.Int(key)
	return int(n)
}
