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

	// The daemon's other records of the task (docs/tasks.md, "What taskd
	// writes"), each as the file holds it: an object or a list is the
	// parsed JSON, changed in place or replaced.
	Hold       *taskfile.Object // hitl: why a needs_human task waits
	Grant      *taskfile.Object // grant: a person's allow, until the attempt it gave ends
	Boundary   *taskfile.Object // boundary: a workflow stopped at a stage boundary
	Workspace  *taskfile.Object // workspace: the task's git worktree
	Progress   *taskfile.Object // progress: a streaming agent's progress
	Children   *taskfile.Object // children: a parent's children
	Wait       *taskfile.Object // wait: a subagent parent's wait for its children
	Recurrence *taskfile.Object // recurrence: a schedule's runs
	StepTrace  []any            // stepTrace: a workflow's steps walked
	Handoffs   []any            // handoffs: a subagent's handed-off results
	Converges  []any            // converges: a subagent parent's converge requests
	// Iteration is a workflow's step count, GuardAt its loop guard's next
	// stop; LoopIteration a loop's iteration.
	Iteration     int
	GuardAt       int
	LoopIteration int
	// LoopExit is why a loop ended; ReturnsDone: the task's return chain
	// ran to its end.
	LoopExit    string
	ReturnsDone bool
	// EndLogged is the attempt whose end a subagent's events reported
	// (nil: none; 0: a subagent refused before its first attempt);
	// RetryOf the failed attempt a retry follows.
	EndLogged *int
	RetryOf   int
	// CwdNote is why a session's task runs in the home directory;
	// Dispatch why an attempt for a remote worker waits; BranchResult a
	// workflow branch's verdict.
	CwdNote      string
	Dispatch     string
	BranchResult string
	// Delivered: an ended child's result reached its parent's inbox.
	Delivered bool

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
	"hitl", "grant", "boundary", "workspace", "progress", "children", "wait",
	"recurrence", "iteration", "guardAt", "stepTrace", "handoffs", "converges",
	"loopIteration", "loopExit", "returnsDone", "endLogged", "retryOf", "cwdNote", "dispatch", "branchResult",
	"delivered",
}

// more are the Record's fields after Archived, by key, in Keys' order: a
// pointer to each, read, compared and written alike.
var more = []struct {
	key string
	of  func(*Record) any
}{
	{"hitl", func(r *Record) any { return &r.Hold }},
	{"grant", func(r *Record) any { return &r.Grant }},
	{"boundary", func(r *Record) any { return &r.Boundary }},
	{"workspace", func(r *Record) any { return &r.Workspace }},
	{"progress", func(r *Record) any { return &r.Progress }},
	{"children", func(r *Record) any { return &r.Children }},
	{"wait", func(r *Record) any { return &r.Wait }},
	{"recurrence", func(r *Record) any { return &r.Recurrence }},
	{"iteration", func(r *Record) any { return &r.Iteration }},
	{"guardAt", func(r *Record) any { return &r.GuardAt }},
	{"stepTrace", func(r *Record) any { return &r.StepTrace }},
	{"handoffs", func(r *Record) any { return &r.Handoffs }},
	{"converges", func(r *Record) any { return &r.Converges }},
	{"loopIteration", func(r *Record) any { return &r.LoopIteration }},
	{"loopExit", func(r *Record) any { return &r.LoopExit }},
	{"returnsDone", func(r *Record) any { return &r.ReturnsDone }},
	{"endLogged", func(r *Record) any { return &r.EndLogged }},
	{"retryOf", func(r *Record) any { return &r.RetryOf }},
	{"cwdNote", func(r *Record) any { return &r.CwdNote }},
	{"dispatch", func(r *Record) any { return &r.Dispatch }},
	{"branchResult", func(r *Record) any { return &r.BranchResult }},
	{"delivered", func(r *Record) any { return &r.Delivered }},
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
	for _, f := range more {
		read(m, f.key, f.of(&r))
	}
	for k, v := range m.All() {
		if recordKey[k] && isZero(v, &r, k) {
			r.blank = append(r.blank, k)
		}
	}
	r.loaded = r.clone()
	return r
}

// FieldOf returns the one field of the record task t's file holds that
// field picks, as RecordOf(t) has it, without reading the others: for an
// accessor that needs one field of the record, and is asked often, as in
//
//	task.FieldOf(t, func(r *task.Record) **taskfile.Object { return &r.Children })
//
// A field after Archived (more) is read alone; any other from the whole
// record.
func FieldOf[T any](t *taskfile.Task, field func(*Record) *T) T {
	var r Record
	p := field(&r)
	for _, f := range more {
		if f.of(&r) != any(p) {
			continue
		}
		if t != nil {
			if m := t.Metadata.Object("taskd"); m != nil {
				read(m, f.key, p)
			}
		}
		return *p
	}
	r = RecordOf(t)
	return *field(&r)
}

// recordKey holds Keys but state: the keys RecordOf reads a field of.
var recordKey = func() map[string]bool {
	m := make(map[string]bool, len(Keys))
	for _, k := range Keys[1:] {
		m[k] = true
	}
	return m
}()

// clone returns a copy of r that shares no object or list with it.
func (r *Record) clone() *Record {
	c := new(Record)
	*c = *r
	c.Result, c.Pause = r.Result.Clone(), r.Pause.Clone()
	for _, f := range more {
		switch p := f.of(c).(type) {
		case **taskfile.Object:
			*p = (*p).Clone()
		case *[]any:
			*p = cloneList(*p)
		case **int:
			if *p != nil {
				n := **p
				*p = &n
			}
		}
	}
	return c
}

// read sets the field p points to from key of m; a value of the wrong
// type reads as absent.
func read(m *taskfile.Object, key string, p any) {
	switch p := p.(type) {
	case **taskfile.Object:
		*p = m.Object(key).Clone()
	case *[]any:
		v, _ := m.Get(key)
		l, _ := v.([]any)
		*p = cloneList(l)
	case *int:
		*p = intOf(m, key)
	case **int:
		if n, ok := m.Int(key); ok {
			v := int(n)
			*p = &v
		}
	case *string:
		*p, _ = m.String(key)
	case *bool:
		*p, _ = m.Bool(key)
	}
}

// value returns the field p points to as Store writes it, and whether it
// is its zero value (absent from the file).
func value(p any) (v any, zero bool) {
	switch p := p.(type) {
	case **taskfile.Object:
		return *p, *p == nil
	case *[]any:
		return *p, *p == nil
	case *int:
		return *p, *p == 0
	case **int:
		if *p == nil {
			return nil, true
		}
		return **p, false
	case *string:
		return *p, *p == ""
	case *bool:
		return true, !*p
	}
	panic("task: a Record field of an unknown type")
}

// same reports whether the fields p and q point to hold the same value.
func same(p, q any) bool {
	a, za := value(p)
	b, zb := value(q)
	if za || zb {
		return za == zb
	}
	switch a := a.(type) {
	case *taskfile.Object:
		return sameObject(a, b.(*taskfile.Object))
	case []any:
		return bytes.Equal(taskfile.AppendJSON(nil, a), taskfile.AppendJSON(nil, b))
	}
	return a == b
}

// cloneList returns a deep copy of l (nil for nil, empty for empty).
func cloneList(l []any) []any {
	if l == nil {
		return nil
	}
	o := taskfile.NewObject()
	o.Set("l", l)
	c, _ := o.Clone().Get("l")
	return c.([]any)
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
	for _, f := range more {
		if p := f.of(&rec); !same(p, f.of(&was)) {
			v, zero := value(p)
			put(f.key, v, zero)
		}
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
func isZero(v any, r *Record, key string) bool {
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
	for _, f := range more {
		if f.key == key {
			_, zero := value(f.of(r))
			return zero
		}
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
	if s == "" {
		return time.Time{} // absent: no time to parse
	}
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

// Change applies change to task t's record and stores it (Store): for a
// field the daemon writes outside a move of the state.
func Change(t *taskfile.Task, change func(*Record)) {
	rec := RecordOf(t)
	change(&rec)
	Store(t, rec)
}
