package task_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestRecordMoreFields: each of the daemon's further records (hitl,
// children, stepTrace, …) is read into its Record field, written back
// by Store alone when it changed — the file's other keys, their order
// and the bytes of untouched values kept — and removed when cleared.
func TestRecordMoreFields(t *testing.T) {
	const file = `{"x":1.50,"hitl":{"reason":"r","kind":"guard"},"grant":{"session":"s"},"boundary":{"step":"a"},` +
		`"workspace":{"path":"w"},"progress":{"turns":2},"children":{"queued":["3"]},"wait":{"ids":["4"]},` +
		`"recurrence":{"runs":1},"stepTrace":[{"step":"a"}],"handoffs":[{"id":"5"}],"converges":[],"iteration":3,` +
		`"guardAt":10,"loopIteration":2,"loopExit":"count","returnsDone":true,"endLogged":1,"retryOf":1,"cwdNote":"n","dispatch":"d",` +
		`"branchResult":"pass","delivered":true,"y":[1]}`
	obj := func(v map[string]any) *taskfile.Object { return task.Object(v) }
	tests := []struct {
		name   string
		read   func(task.Record) any
		want   any // the field as read
		change func(*task.Record)
		after  string // metadata.taskd after the change is stored
	}{
		{"hitl", func(r task.Record) any { s, _ := r.Hold.String("reason"); return s }, "r",
			func(r *task.Record) { r.Hold.Set("reason", "q") },
			`"hitl":{"reason":"q","kind":"guard"},`},
		{"hitl cleared", func(r task.Record) any { s, _ := r.Hold.String("kind"); return s }, "guard",
			func(r *task.Record) { r.Hold = nil }, ``},
		{"grant", func(r task.Record) any { s, _ := r.Grant.String("session"); return s }, "s",
			func(r *task.Record) { r.Grant = obj(map[string]any{"session": "t"}) }, `"grant":{"session":"t"},`},
		{"boundary", func(r task.Record) any { s, _ := r.Boundary.String("step"); return s }, "a",
			func(r *task.Record) { r.Boundary = nil }, ``},
		{"workspace", func(r task.Record) any { s, _ := r.Workspace.String("path"); return s }, "w",
			func(r *task.Record) { r.Workspace.Set("commit", "c") }, `"workspace":{"path":"w","commit":"c"},`},
		{"progress", func(r task.Record) any { n, _ := r.Progress.Int("turns"); return n }, int64(2),
			func(r *task.Record) { r.Progress.Set("turns", 3) }, `"progress":{"turns":3},`},
		{"children", func(r task.Record) any { v, _ := r.Children.Get("queued"); return v }, []any{"3"},
			func(r *task.Record) { r.Children.Delete("queued") }, `"children":{},`},
		{"wait", func(r task.Record) any { v, _ := r.Wait.Get("ids"); return v }, []any{"4"},
			func(r *task.Record) { r.Wait = nil }, ``},
		{"recurrence", func(r task.Record) any { n, _ := r.Recurrence.Int("runs"); return n }, int64(1),
			func(r *task.Record) { r.Recurrence.Set("runs", 2) }, `"recurrence":{"runs":2},`},
		{"stepTrace", func(r task.Record) any { return len(r.StepTrace) }, 1,
			func(r *task.Record) { r.StepTrace = append(r.StepTrace, "b") }, `"stepTrace":[{"step":"a"},"b"],`},
		{"handoffs", func(r task.Record) any { return len(r.Handoffs) }, 1,
			func(r *task.Record) { r.Handoffs = nil }, ``},
		{"converges (empty)", func(r task.Record) any { return r.Converges != nil && len(r.Converges) == 0 }, true,
			func(r *task.Record) { r.Converges = []any{"c"} }, `"converges":["c"],`},
		{"iteration", func(r task.Record) any { return r.Iteration }, 3,
			func(r *task.Record) { r.Iteration = 4 }, `"iteration":4,`},
		{"guardAt", func(r task.Record) any { return r.GuardAt }, 10,
			func(r *task.Record) { r.GuardAt = 0 }, ``},
		{"loopIteration", func(r task.Record) any { return r.LoopIteration }, 2,
			func(r *task.Record) { r.LoopIteration = 3 }, `"loopIteration":3,`},
		{"loopExit", func(r task.Record) any { return r.LoopExit }, "count",
			func(r *task.Record) { r.LoopExit = "" }, ``},
		{"returnsDone", func(r task.Record) any { return r.ReturnsDone }, true,
			func(r *task.Record) { r.ReturnsDone = false }, ``},
		{"endLogged", func(r task.Record) any { return *r.EndLogged }, 1,
			func(r *task.Record) { n := 0; r.EndLogged = &n }, `"endLogged":0,`},
		{"endLogged (cleared)", func(r task.Record) any { return *r.EndLogged }, 1,
			func(r *task.Record) { r.EndLogged = nil }, ``},
		{"retryOf", func(r task.Record) any { return r.RetryOf }, 1,
			func(r *task.Record) { r.RetryOf = 0 }, ``},
		{"cwdNote", func(r task.Record) any { return r.CwdNote }, "n",
			func(r *task.Record) { r.CwdNote = "m" }, `"cwdNote":"m",`},
		{"dispatch", func(r task.Record) any { return r.Dispatch }, "d",
			func(r *task.Record) { r.Dispatch = "" }, ``},
		{"branchResult", func(r task.Record) any { return r.BranchResult }, "pass",
			func(r *task.Record) { r.BranchResult = "fail" }, `"branchResult":"fail",`},
		{"delivered", func(r task.Record) any { return r.Delivered }, true,
			func(r *task.Record) { r.Delivered = false }, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tf := parse(t, withTaskd(file))
			rec := task.RecordOf(tf)
			if got := tt.read(rec); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("read %#v, want %#v", got, tt.want)
			}
			task.Store(tf, task.RecordOf(tf)) // a round trip writes nothing
			if got := string(tf.Marshal()); got != string(parse(t, withTaskd(file)).Marshal()) {
				t.Errorf("an unchanged record rewrote the file:\n%s", got)
			}
			tt.change(&rec)
			task.Store(tf, rec)
			got := compact(taskfile.AppendJSON(nil, tf.Metadata.Object("taskd")))
			if want := only(t, file, strings.Fields(tt.name)[0], tt.after); got != want {
				t.Errorf("metadata.taskd =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// only returns the compact form of metadata.taskd of file with field
// key's value replaced by after ("key":value, — empty: the field removed).
func only(t *testing.T, file, key, after string) string {
	t.Helper()
	m := parse(t, withTaskd(file)).Metadata.Object("taskd")
	v, _ := m.Get(key)
	all := compact(taskfile.AppendJSON(nil, m))
	field := `"` + key + `":` + compact(taskfile.AppendJSON(nil, v)) + `,`
	if !strings.Contains(all, field) {
		t.Fatalf("%s not in %s", field, all)
	}
	return strings.Replace(all, field, after, 1)
}
