package task_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestFieldOf: one field of the record, read alone, is the field of the
// whole record (RecordOf), for fields read alone and from the whole
// record, fields set, of the wrong type and absent, and for tasks with no
// record.
func TestFieldOf(t *testing.T) {
	files := map[string]string{
		"set": `{"id": "1", "subject": "s", "status": "in_progress", "blocks": [], "blockedBy": [], "metadata": {"taskd": {
			"state": "running", "attempt": 2, "startedAt": "2026-11-27T13:21:46.871326883Z",
			"workspace": {"path": "/w", "branch": "b"}, "children": {"parallel": ["2", "3"]},
			"grant": {"session": "s1", "tools": ["Bash"]}, "handoffs": [{"child": "2"}, 3],
			"retryOf": 1, "endLogged": 2, "dispatch": "w1"}}}`,
		"wrong types": `{"id": "1", "subject": "s", "status": "pending", "blocks": [], "blockedBy": [], "metadata": {"taskd": {
			"state": 1, "attempt": "2", "workspace": "w", "children": [], "grant": 1, "handoffs": {}, "retryOf": "1", "endLogged": "yes", "dispatch": 4}}}`,
		"no record":   `{"id": "1", "subject": "s", "status": "pending", "blocks": [], "blockedBy": [], "metadata": {"other": 1}}`,
		"no metadata": `{"id": "1", "subject": "s", "status": "pending", "blocks": [], "blockedBy": []}`,
	}
	for name, data := range files {
		tf, err := taskfile.Parse([]byte(data), "1.json", "1")
		if err != nil {
			t.Fatal(err)
		}
		check(t, name, tf)
	}
	check(t, "nil task", nil)
}

func check(t *testing.T, name string, tf *taskfile.Task) {
	t.Helper()
	r := task.RecordOf(tf)
	fields := []struct {
		field string
		got   any
		want  any
	}{
		{"Workspace", task.FieldOf(tf, func(r *task.Record) **taskfile.Object { return &r.Workspace }), r.Workspace},
		{"Children", task.FieldOf(tf, func(r *task.Record) **taskfile.Object { return &r.Children }), r.Children},
		{"Grant", task.FieldOf(tf, func(r *task.Record) **taskfile.Object { return &r.Grant }), r.Grant},
		{"Handoffs", task.FieldOf(tf, func(r *task.Record) *[]any { return &r.Handoffs }), r.Handoffs},
		{"RetryOf", task.FieldOf(tf, func(r *task.Record) *int { return &r.RetryOf }), r.RetryOf},
		{"EndLogged", task.FieldOf(tf, func(r *task.Record) **int { return &r.EndLogged }), r.EndLogged},
		{"Dispatch", task.FieldOf(tf, func(r *task.Record) *string { return &r.Dispatch }), r.Dispatch},
		{"State", task.FieldOf(tf, func(r *task.Record) *task.State { return &r.State }), r.State},
		{"Attempt", task.FieldOf(tf, func(r *task.Record) *int { return &r.Attempt }), r.Attempt},
		{"StartedAt", task.FieldOf(tf, func(r *task.Record) *time.Time { return &r.StartedAt }), r.StartedAt},
	}
	for _, f := range fields {
		if !reflect.DeepEqual(f.got, f.want) {
			t.Errorf("%s: FieldOf %s = %#v, want RecordOf's %#v", name, f.field, f.got, f.want)
		}
	}
}
