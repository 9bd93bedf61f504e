package control_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/internal/jsonorder"
	"github.com/taskd/taskd/taskfile"
)

// newList returns an empty list "L" under a fresh root.
func newList(t *testing.T) *taskfile.Dir {
	t.Helper()
	dir, err := control.OpenList(t.TempDir(), "L", true)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// put writes task id's file as given.
func put(t *testing.T, dir *taskfile.Dir, id, data string) {
	t.Helper()
	if err := os.WriteFile(dir.File(id), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// taskd returns metadata.taskd of task id as compact JSON, with its status.
func taskd(t *testing.T, dir *taskfile.Dir, id string) (string, string) {
	t.Helper()
	tf, err := dir.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	return string(jsonorder.AppendCompact(nil, tf.Metadata.Object("taskd"))), tf.Status
}

// file is a task file of taskd's with metadata.taskd td.
func file(id, status, td string) string {
	return `{"id":"` + id + `","subject":"s","status":"` + status + `","owner":"taskd","metadata":{"taskd":` + td + `}}`
}

// TestOpenList: a list is opened by id, made private on request; a bad id
// or a missing list is an error.
func TestOpenList(t *testing.T) {
	root := t.TempDir()
	if _, err := control.OpenList(root, "../x", true); err == nil || !strings.Contains(err.Error(), "a list name is") {
		t.Errorf("OpenList(../x) = %v, want a refusal of the name", err)
	}
	if _, err := control.OpenList(root, "L", false); err == nil || !strings.Contains(err.Error(), `no list "L"`) {
		t.Errorf("OpenList of a missing list = %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "L")); !errors.Is(err, os.ErrNotExist) {
		t.Error("OpenList without create made the list")
	}
	dir, err := control.OpenList(root, "L", true)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir.Path()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the new list is %v (%v), want mode 0700", fi.Mode(), err)
	}
}

// TestSubmit: a submitted task is taskd's (unless metadata.taskd already
// says so), has an active form, and gets the next id.
func TestSubmit(t *testing.T) {
	dir := newList(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name                string
		in                  *taskfile.Task
		id, owner, activity string
	}{
		{"plain", &taskfile.Task{Subject: "one"}, "1", "taskd", "one"},
		{"active form kept", &taskfile.Task{Subject: "two", ActiveForm: "Doing two"}, "2", "taskd", "Doing two"},
		{"owner kept", &taskfile.Task{Subject: "three", Owner: "taskd:fast"}, "3", "taskd:fast", "three"},
		{"metadata.taskd addresses it", withTaskd(&taskfile.Task{Subject: "four"}), "4", "", "four"},
		{"an id of its own", &taskfile.Task{ID: "40", Subject: "forty"}, "40", "taskd", "forty"},
		{"after the highest", &taskfile.Task{Subject: "next"}, "41", "taskd", "next"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := control.Submit(ctx, dir, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			onDisk, err := dir.Read(got.ID)
			if err != nil {
				t.Fatal(err)
			}
			if onDisk.ID != tt.id || onDisk.Owner != tt.owner || onDisk.ActiveForm != tt.activity || onDisk.Status != taskfile.StatusPending {
				t.Errorf("submitted %+v; want id %s, owner %q, activeForm %q, pending", onDisk, tt.id, tt.owner, tt.activity)
			}
		})
	}
}

func withTaskd(t *taskfile.Task) *taskfile.Task {
	t.EnsureMetadata().EnsureObject("taskd").Set("agent", "exec")
	return t
}

// TestStartTask: a task that ended, waits for a person, is queued or
// retrying is made pending again with how it ended cleared; a task that
// runs or waits for children is refused and left as it was.
func TestStartTask(t *testing.T) {
	const ended = `"cancel":true,"failures":2,"error":"boom","retryAt":"2030-01-01T00:00:00Z","resolve":"yes","resolveNote":"n","hitl":{"reason":"r"},"iteration":3,"guardAt":"x","retryOf":1`
	for _, tt := range []struct {
		name, status, td string
		want             string // metadata.taskd after, "" for a refusal
		refusal          string
	}{
		{name: "failed", status: "pending", td: `{"prompt":"p","state":"failed","attempt":2,` + ended + `}`, want: `{"prompt":"p","attempt":2}`},
		{name: "succeeded", status: "completed", td: `{"prompt":"p","state":"succeeded","finishedAt":"t"}`, want: `{"prompt":"p","finishedAt":"t"}`},
		{name: "cancelled", status: "pending", td: `{"state":"cancelled","cancel":true}`, want: `{}`},
		{name: "queued", status: "pending", td: `{"state":"queued","parent":"1"}`, want: `{"parent":"1"}`},
		{name: "needs a person", status: "pending", td: `{"state":"needs_human","hitl":{"options":["a"]}}`, want: `{}`},
		{name: "running", status: "in_progress", td: `{"state":"running"}`, refusal: "task 1 is running; cancel it first"},
		{name: "waiting", status: "in_progress", td: `{"state":"waiting"}`, refusal: "task 1 is waiting; cancel it first"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := newList(t)
			put(t, dir, "1", file("1", tt.status, tt.td))
			before, _ := os.ReadFile(dir.File("1"))
			_, err := control.StartTask(context.Background(), dir, "1")
			if tt.refusal != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refusal) {
					t.Fatalf("StartTask = %v, want %q", err, tt.refusal)
				}
				if after, _ := os.ReadFile(dir.File("1")); string(after) != string(before) {
					t.Errorf("a refused start changed the file:\n%s", after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, status := taskd(t, dir, "1"); got != tt.want || status != taskfile.StatusPending {
				t.Errorf("after StartTask: %s (%s)\nwant %s (pending)", got, status, tt.want)
			}
		})
	}
}

// TestStartTask_NotTaskd: a task that is not taskd's is refused.
func TestStartTask_NotTaskd(t *testing.T) {
	dir := newList(t)
	put(t, dir, "1", `{"id":"1","subject":"s","status":"completed"}`)
	for name, f := range map[string]func(context.Context, *taskfile.Dir, string) (*taskfile.Task, error){
		"StartTask": control.StartTask, "RestartTask": control.RestartTask, "CancelTask": control.CancelTask,
	} {
		if _, err := f(context.Background(), dir, "1"); !errors.Is(err, control.ErrNotTaskd) {
			t.Errorf("%s = %v, want ErrNotTaskd", name, err)
		}
	}
}

// TestRestartTask: a workflow starts again at its first step, its trace
// marked; a plain task loses how its run ended and where its loop was; a
// fork's branch is refused.
func TestRestartTask(t *testing.T) {
	dir := newList(t)
	put(t, dir, "1", `{"id":"1","subject":"s","status":"completed","owner":"taskd","metadata":{"workflowType":"w","currentStep":"review","retryCount":2,"forkState":{"a":1},`+
		`"taskd":{"state":"succeeded","boundary":{"options":["continue"]},"children":{"done":["2"]},"loopIteration":4,"grant":{"tools":["Bash"]},"stepTrace":[{"step":"plan"}],"attempt":3}}}`)
	before := time.Now().Add(-time.Second)
	if _, err := control.RestartTask(context.Background(), dir, "1"); err != nil {
		t.Fatal(err)
	}
	tf, err := dir.Read("1")
	if err != nil {
		t.Fatal(err)
	}
	md := tf.Metadata
	step, _ := md.String("currentStep")
	retries, _ := md.Int("retryCount")
	if step != "" || retries != 0 || md.Has("forkState") || tf.Status != taskfile.StatusPending {
		t.Errorf("workflow after restart: step %q, retries %d, forkState %v, status %s", step, retries, md.Has("forkState"), tf.Status)
	}
	m := md.Object("taskd")
	for _, k := range []string{"state", "boundary", "children", "loopIteration", "grant"} {
		if m.Has(k) {
			t.Errorf("metadata.taskd.%s survived the restart", k)
		}
	}
	if n, _ := m.Int("attempt"); n != 3 {
		t.Errorf("attempt = %d, want 3 kept (runs are numbered after the earlier ones)", n)
	}
	v, _ := m.Get("stepTrace")
	trace, _ := v.([]any)
	if len(trace) != 2 {
		t.Fatalf("stepTrace = %v, want the earlier step and a marker", trace)
	}
	marker := trace[1].(*taskfile.Object)
	action, _ := marker.String("action")
	by, _ := marker.String("by")
	atS, _ := marker.String("at")
	at, err := time.Parse(time.RFC3339Nano, atS)
	if action != "restart" || by != "person" || err != nil || at.Before(before) {
		t.Errorf("marker %s", jsonorder.AppendCompact(nil, marker))
	}

	put(t, dir, "2", `{"id":"2","subject":"s","status":"pending","owner":"taskd","metadata":{"parentTaskId":"1","taskd":{"state":"failed"}}}`)
	if _, err := control.RestartTask(context.Background(), dir, "2"); err == nil || !strings.Contains(err.Error(), "restart task 1") {
		t.Errorf("RestartTask of a fork branch = %v, want a pointer to its fork", err)
	}
}

// TestCancelTask: a task not ended is marked for cancellation; an ended
// one is refused.
func TestCancelTask(t *testing.T) {
	for _, tt := range []struct {
		state   string
		refused bool
	}{
		{"", false}, {"running", false}, {"waiting", false}, {"needs_human", false}, {"queued", false},
		{"succeeded", true}, {"failed", true}, {"cancelled", true}, {"timed_out", true},
	} {
		dir := newList(t)
		td := `{}`
		if tt.state != "" {
			td = `{"state":"` + tt.state + `"}`
		}
		put(t, dir, "1", file("1", "pending", td))
		_, err := control.CancelTask(context.Background(), dir, "1")
		got, _ := taskd(t, dir, "1")
		switch {
		case tt.refused && (err == nil || !strings.Contains(err.Error(), "has already ended")):
			t.Errorf("CancelTask of a %s task = %v, want a refusal", tt.state, err)
		case tt.refused && strings.Contains(got, `"cancel":true`):
			t.Errorf("a refused cancel wrote %s", got)
		case !tt.refused && (err != nil || !strings.Contains(got, `"cancel":true`)):
			t.Errorf("CancelTask of a %q task = %v, metadata.taskd %s", tt.state, err, got)
		}
	}
}

// TestResolve: an answer must be one the task offers; a note goes with
// it, trimmed; a stage boundary takes continue.
func TestResolve(t *testing.T) {
	for _, tt := range []struct {
		name, td, answer, note string
		want                   string // metadata.taskd after, "" for a refusal
		refusal                string
	}{
		{name: "an offered answer", td: `{"state":"needs_human","hitl":{"options":["yes","no"]}}`, answer: "no", note: "  because  ",
			want: `{"state":"needs_human","hitl":{"options":["yes","no"]},"resolve":"no","resolveNote":"because"}`},
		{name: "no options: any answer", td: `{"state":"needs_human","hitl":{}}`, answer: "whatever",
			want: `{"state":"needs_human","hitl":{},"resolve":"whatever"}`},
		{name: "an answer not offered", td: `{"state":"needs_human","hitl":{"options":["yes","no"]}}`, answer: "maybe",
			refusal: `"maybe" is not an answer task 1 accepts; answer one of: yes, no`},
		{name: "a stage boundary", td: `{"state":"succeeded","boundary":{}}`, answer: "continue",
			want: `{"state":"succeeded","boundary":{},"resolve":"continue"}`},
		{name: "a boundary's own options", td: `{"state":"succeeded","boundary":{"options":["ship"]}}`, answer: "continue",
			refusal: "answer one of: ship"},
		{name: "succeeded without a boundary", td: `{"state":"succeeded"}`, answer: "continue", refusal: "not at a stage boundary"},
		{name: "running", td: `{"state":"running"}`, answer: "yes", refusal: `does not wait for an answer (its state is "running")`},
		{name: "failed", td: `{"state":"failed"}`, answer: "passed", refusal: `does not wait for an answer (its state is "failed"); it has ended: run it again with taskd retry`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := newList(t)
			put(t, dir, "1", file("1", "pending", tt.td))
			_, err := control.ResolveNote(context.Background(), dir, "1", tt.answer, tt.note)
			got, _ := taskd(t, dir, "1")
			if tt.refusal != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refusal) {
					t.Fatalf("ResolveNote = %v, want %q", err, tt.refusal)
				}
				if got != tt.td {
					t.Errorf("a refused answer changed metadata.taskd to %s", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ResolveNote = %v; metadata.taskd %s\nwant %s", err, got, tt.want)
			}
		})
	}
	dir := newList(t)
	put(t, dir, "1", file("1", "pending", `{"state":"needs_human"}`))
	if _, err := control.Resolve(context.Background(), dir, "1", "ok"); err != nil {
		t.Fatal(err)
	}
	if got, _ := taskd(t, dir, "1"); got != `{"state":"needs_human","resolve":"ok"}` {
		t.Errorf("Resolve wrote %s", got)
	}
}

// TestRemove: the file goes, with its run folders and inbox (their bytes
// counted); an active task only when forced; a file that does not parse
// goes too; the other tasks' files stay.
func TestRemove(t *testing.T) {
	ctx := context.Background()
	dir := newList(t)
	put(t, dir, "1", file("1", "completed", `{"state":"succeeded"}`))
	put(t, dir, "2", file("2", "in_progress", `{"state":"running"}`))
	put(t, dir, "3", `{not json`)
	put(t, dir, "4", `{"id":"4","subject":"s","status":"in_progress"}`) // another owner's, in progress
	for _, p := range []string{area.RunDir(dir.Path(), "1", 1), area.InboxDir(dir.Path(), "1"), area.RunDir(dir.Path(), "9", 1)} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "f"), []byte("12345"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n, err := control.Remove(ctx, dir, "1", false)
	if err != nil || n != 10 {
		t.Errorf("Remove(1) = %d, %v; want the 10 bytes of its run folder and inbox", n, err)
	}
	for _, p := range []string{dir.File("1"), area.RunsDir(dir.Path(), "1"), area.InboxDir(dir.Path(), "1")} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there", p)
		}
	}
	if _, err := os.Stat(area.RunDir(dir.Path(), "9", 1)); err != nil {
		t.Errorf("another task's run folder went: %v", err)
	}
	for id, want := range map[string]error{"2": control.ErrActive, "4": control.ErrNotTaskd} {
		if _, err := control.Remove(ctx, dir, id, false); !errors.Is(err, want) {
			t.Errorf("Remove(%s) unforced = %v, want %v", id, err, want)
		}
		if _, err := os.Stat(dir.File(id)); err != nil {
			t.Errorf("a refused remove took the file: %v", err)
		}
		if _, err := control.Remove(ctx, dir, id, true); err != nil {
			t.Errorf("Remove(%s) forced = %v", id, err)
		}
	}
	if _, err := control.Remove(ctx, dir, "3", false); err != nil {
		t.Errorf("Remove of a file that does not parse = %v", err)
	}
	if ids, _ := dir.List(); len(ids) != 0 {
		t.Errorf("left: %v", ids)
	}
}
