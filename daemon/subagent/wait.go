package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// A /handoff --transfer-control or /converge line whose children have not
// ended suspends its task before the agent starts: the task is written
// waiting, with metadata.taskd.wait saying for what, and the pass over its
// leading lines ends. When the wait is over (the children have ended and
// their results are delivered, the first success of first_success, or the
// handoff's deadline) the task is made pending again and runs from the top:
// every leading line can run twice (children are found by name, records by
// line), so the lines before the one that waited do nothing new, and that
// line now finds what it waited for.

// Wait is metadata.taskd.wait.
type Wait struct {
	Kind     string   `json:"kind"` // "handoff", "converge" or "results"
	Line     int      `json:"line"`
	Children []string `json:"children"`
	Any      bool     `json:"any,omitempty"`      // one success is enough (first_success)
	Deadline string   `json:"deadline,omitempty"` // the handoff's timeout
	// Attempt is the task's attempt when it was suspended: a wait left
	// behind by a later attempt (a task restarted by hand) is stale.
	Attempt int `json:"attempt"`

	deadline time.Time
}

// WaitOf returns the wait of a task suspended by a leading line, or nil.
func WaitOf(t *taskfile.Task) *Wait {
	rec := task.RecordOf(t)
	w, ok := decodeValue[Wait](rec.Wait)
	if !ok || len(w.Children) == 0 {
		return nil
	}
	if rec.Attempt != w.Attempt {
		return nil
	}
	if w.Deadline != "" {
		w.deadline, _ = time.Parse(time.RFC3339Nano, w.Deadline)
	}
	return &w
}

// suspended is the error of a leading line that stopped the pass: the task
// is already written waiting (or needs_human).
type suspended struct {
	task *taskfile.Task
}

func (s *suspended) Error() string { return "the task waits" }

// Suspended reports whether err says a leading line suspended the task,
// and returns the task as written.
func Suspended(err error) (*taskfile.Task, bool) {
	var s *suspended
	if errors.As(err, &s) {
		return s.task, true
	}
	return nil, false
}

// suspend writes task t waiting for w and returns the error that ends the
// pass. No agent ran, so the attempt number goes back to what it was before
// the claim.
func suspend(ctx context.Context, j *job.Job, t *taskfile.Task, sp task.Spec, w Wait) error {
	l := j.List
	w.Attempt = sp.Attempt - 1
	written, err := l.Dir.Update(ctx, t.ID, func(t *taskfile.Task) error {
		rec := task.RecordOf(t)
		unclaim(&rec, t.ID, sp.Attempt)
		rec.Wait = objectOf(w)
		_, err := task.Apply(t, task.Wait, rec)
		return err
	})
	if err != nil {
		return err
	}
	l.Events.Append(eventlog.Event{Type: eventlog.TaskWaiting, List: l.ID, Task: t.ID, Parent: sp.Parent, Attempt: sp.Attempt - 1,
		Data: map[string]any{"children": w.Children, "reason": w.Kind, "line": w.Line}})
	return &suspended{task: written}
}

// WaitForResults suspends task t before its agent until children have
// ended and their results are delivered: its prompt uses their results
// ($RESULT[name] of its parallel items). As after a /handoff line's wait,
// the task then runs again from its first line.
func WaitForResults(ctx context.Context, j *job.Job, t *taskfile.Task, sp task.Spec, children []string) error {
	return suspend(ctx, j, t, sp, Wait{Kind: "results", Children: children})
}

// unclaim undoes, in rec, claim's attempt bookkeeping for a pass whose
// agent never ran.
func unclaim(rec *task.Record, id string, attempt int) {
	rec.StartedAt = time.Time{}
	rec.Attempt, rec.RunDir = 0, ""
	if attempt > 1 {
		rec.Attempt, rec.RunDir = attempt-1, area.RelRunDir(id, attempt-1)
	}
}

// Release ends the wait of a suspended task: it becomes pending (a
// TaskResumed event says why), and runs again from its first line.
func Release(ctx context.Context, j *job.Job) (*taskfile.Task, error) {
	l, id := j.List, j.ID
	var w *Wait
	var sp task.Spec
	t, err := l.Dir.Update(ctx, id, func(t *taskfile.Task) error {
		s, err := task.ReadSpec(t)
		if w = WaitOf(t); err != nil || w == nil || s.State != task.Waiting {
			return job.ErrNotRunnable
		}
		sp = s
		rec := task.RecordOf(t)
		rec.Wait = nil
		_, err = task.Apply(t, task.Release, rec)
		return err
	})
	if err != nil {
		return nil, err
	}
	l.Events.Append(eventlog.Event{Type: eventlog.TaskResumed, List: l.ID, Task: id, Parent: sp.Parent, Attempt: sp.Attempt,
		Data: map[string]any{"reason": w.Kind, "line": w.Line, "children": w.Children}})
	return t, nil
}

// childDone reports whether child c has ended and its result has been
// delivered to its parent (so that it can be run again, or its result
// counted, without racing the delivery).
func childDone(c *taskfile.Task) bool {
	rec := task.RecordOf(c)
	return rec.State.Ended() && (rec.Delivered || rec.Archived)
}

// waitTasks waits until done holds for the tasks ids of dir (a missing task
// is passed as nil), waking on the file events of the directory, not by
// polling. It returns ctx's error if ctx ends first.
func waitTasks(ctx context.Context, dir *taskfile.Dir, ids []string, done func(map[string]*taskfile.Task) bool) (map[string]*taskfile.Task, error) {
	w, err := newDirWatch(dir.Path())
	if err != nil {
		return nil, err
	}
	defer w.Close()
	for {
		// Read after the watch is in place, so no change is missed.
		tasks := map[string]*taskfile.Task{}
		for _, id := range ids {
			t, err := dir.Read(id)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				var bad *taskfile.BadFileError
				if !errors.As(err, &bad) {
					return nil, err
				}
			}
			tasks[id] = t
		}
		if done(tasks) {
			return tasks, nil
		}
		if err := w.next(ctx, ids); err != nil {
			return tasks, err
		}
	}
}

// restartChild runs an ended child again (a handoff's retry): its state,
// error, cancellation and delivery are cleared, its attempts go on. It
// records the attempt it retries (metadata.taskd.retryOf), whose report the
// next attempt's prompt carries, and a person's note for it, if given.
func restartChild(ctx context.Context, dir *taskfile.Dir, id, note string) (*taskfile.Task, error) {
	return dir.Update(ctx, id, func(t *taskfile.Task) error {
		if !childDone(t) {
			return errors.New("task " + id + " has not ended")
		}
		rec := task.RecordOf(t)
		rec.Failures, rec.Error, rec.RetryAt, rec.FinishedAt = 0, "", time.Time{}, time.Time{}
		rec.Delivered, rec.Hold = false, nil
		if n := rec.Attempt; n > 0 {
			rec.RetryOf = n
		}
		if _, err := task.Apply(t, task.Restart, rec); err != nil {
			return err
		}
		m := task.Meta(t)
		for _, k := range []string{"cancel", "resolve"} {
			m.Delete(k)
		}
		if note != "" {
			m.Set("resolveNote", note)
		}
		return nil
	})
}

// decodeList decodes l, a task.Record's list (entries that do not decode
// are skipped).
func decodeList[T any](l []any) []T {
	var out []T
	for _, e := range l {
		var r T
		if json.Unmarshal(taskfile.AppendJSON(nil, e), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// decodeValue decodes o, a task.Record's object.
func decodeValue[T any](o *taskfile.Object) (T, bool) {
	var r T
	if o == nil {
		return r, false
	}
	return r, json.Unmarshal(taskfile.AppendJSON(nil, o), &r) == nil
}

// jsonValue returns v (any JSON-encodable value) as the parsed JSON a
// task.Record field holds.
func jsonValue(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // records are plain structs: a programming error
	}
	val, err := taskfile.ParseValue(data)
	if err != nil {
		panic(err)
	}
	return val
}

// objectOf is jsonValue for a struct: an object (nil for a nil pointer).
func objectOf(v any) *taskfile.Object {
	o, _ := jsonValue(v).(*taskfile.Object)
	return o
}

// listOf is jsonValue for a slice: a list (nil for a nil slice).
func listOf(v any) []any {
	l, _ := jsonValue(v).([]any)
	return l
}

// stopWait bounds how long to wait for cancelled children to end: the
// grace period twice over, and a margin.
func stopWait(ctx context.Context, cfg *config.Config) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 2*cfg.Grace+30*time.Second)
}

// Ends is when the wait ends whatever its children do (a handoff's
// timeout), or the zero time.
func (w *Wait) Ends() time.Time { return w.deadline }
