package task

import (
	"bytes"
	"encoding/json"
	"slices"
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

	// loaded is the record as RecordOf read it: Store writes only the
	// fields changed since (nil: those that differ from the file).
	loaded *Record
	// blank are the keys of the file that read as their zero value:
	// unreadable (a time that is not one), null, or zero as written.
	blank []string
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

// RecordOf returns the record task t's file holds, a copy: changing it
// changes nothing in t until it is stored. A field of the wrong type
// reads as absent (ReadSpec reports the ones a person may get wrong);
// the next Store that changes the record removes it, as it does a field
// written as its zero value or null.
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
	r.Result = m.Object("result").Clone()
	r.Failures = intOf(m, "failures")
	r.Pauses = intOf(m, "pauses")
	r.Pause = m.Object("pause").Clone()
	r.RetryAt = timeOf(m, "retryAt")
	r.Error, _ = m.String("error")
	r.Interrupted = intOf(m, "interrupted")
	r.InterruptedSession, _ = m.String("interruptedSession")
	r.CancelledBy, _ = m.String("cancelledBy")
	r.CancelCause, _ = m.String("cancelCause")
	r.CompletedBy, _ = m.String("completedBy")
	r.FailedBlocker, _ = m.String("failedBlocker")
	r.Archived, _ = m.Bool("archived")
	for _, k := range Keys[1:] {
		if v, ok := m.Get(k); ok && isZero(v, r, k) {
			r.blank = append(r.blank, k)
		}
	}
	was := r
	was.Result, was.Pause = r.Result.Clone(), r.Pause.Clone()
	r.loaded = &was
	return r
}

// Store writes rec's fields, its state aside (Apply moves it), into task
// t's metadata.taskd: only the fields changed since rec was read
// (RecordOf; for a Record made otherwise, those that differ from the
// file) are touched, so the file's other keys, their order and the bytes
// of unchanged values stay as they were; a field set anew is appended, a
// field cleared (its zero value) is removed, and so, once the record
// changes, is a field it could not read. A record unchanged writes
// nothing.
func Store(t *taskfile.Task, rec Record) {
	cur := rec.loaded
	if cur == nil {
		file := RecordOf(t)
		cur = &file
	}
	ops := changes(rec, *cur)
	if len(ops) == 0 {
		return
	}
	m := Meta(t)
	for _, k := range cur.blank {
		if !slices.ContainsFunc(ops, func(o change) bool { return o.key == k }) {
			m.Delete(k)
		}
	}
	for _, o := range ops {
		if o.clear {
			m.Delete(o.key)
		} else {
			m.Set(o.key, o.v)
		}
	}
}

// A change is one field Store writes: its new value, or its removal.
type change struct {
	key   string
	v     any
	clear bool
}

// changes lists the fields of rec that differ from was, in Keys' order.
func changes(rec, was Record) []change {
	var ops []change
	put := func(key string, v any, clear bool) {
		ops = append(ops, change{key, v, clear})
	}
	if !rec.StartedAt.Equal(was.StartedAt) {
		put("startedAt", Stamp(rec.StartedAt), rec.StartedAt.IsZero())
	}
	if rec.Attempt != was.Attempt {
		put("attempt", rec.Attempt, rec.Attempt == 0)
	}
	if rec.RunDir != was.RunDir {
		put("runDir", rec.RunDir, rec.RunDir == "")
	}
	if !rec.FinishedAt.Equal(was.FinishedAt) {
		put("finishedAt", Stamp(rec.FinishedAt), rec.FinishedAt.IsZero())
	}
	if !sameObject(rec.Result, was.Result) {
		put("result", rec.Result, rec.Result == nil)
	}
	if rec.Failures != was.Failures {
		put("failures", rec.Failures, rec.Failures == 0)
	}
	if rec.Pauses != was.Pauses {
		put("pauses", rec.Pauses, rec.Pauses == 0)
	}
	if !sameObject(rec.Pause, was.Pause) {
		put("pause", rec.Pause, rec.Pause == nil)
	}
	if !rec.RetryAt.Equal(was.RetryAt) {
		put("retryAt", Stamp(rec.RetryAt), rec.RetryAt.IsZero())
	}
	if rec.Error != was.Error {
		put("error", rec.Error, rec.Error == "")
	}
	if rec.Interrupted != was.Interrupted {
		put("interrupted", rec.Interrupted, rec.Interrupted == 0)
	}
	for _, s := range []struct{ key, now, was string }{
		{"interruptedSession", rec.InterruptedSession, was.InterruptedSession},
		{"cancelledBy", rec.CancelledBy, was.CancelledBy},
		{"cancelCause", rec.CancelCause, was.CancelCause},
		{"completedBy", rec.CompletedBy, was.CompletedBy},
		{"failedBlocker", rec.FailedBlocker, was.FailedBlocker},
	} {
		if s.now != s.was {
			put(s.key, s.now, s.now == "")
		}
	}
	if rec.Archived != was.Archived {
		put("archived", true, !rec.Archived)
	}
	return ops
}

// Object returns v (a map, a struct's JSON form already parsed, or an
// *Object) as the object a Record holds: a map's keys sorted, as Set
// writes them.
func Object(v any) *taskfile.Object {
	o := taskfile.NewObject()
	o.Set("v", v)
	return o.Object("v")
}

// isZero reports whether field key of r, read from v, is its zero value.
func isZero(v any, r Record, key string) bool {
	switch key {
	case "startedAt":
		return r.StartedAt.IsZero()
	case "finishedAt":
		return r.FinishedAt.IsZero()
	case "retryAt":
		return r.RetryAt.IsZero()
	case "result":
		return r.Result == nil
	case "pause":
		return r.Pause == nil
	case "attempt", "failures", "pauses", "interrupted":
		n, ok := v.(json.Number)
		i, err := n.Int64()
		return !ok || err != nil || i == 0
	case "archived":
		return v != true
	}
	s, _ := v.(string)
	return s == ""
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
