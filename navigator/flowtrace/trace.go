// Package flowtrace replays recorded calls of flow's Navigate against taskd
// and says where taskd's answers differ. It is test support for the
// compatibility tests of navigator and cmd/taskd, which run when
// TASKD_COMPAT_DIR names a compat directory: flow's workflows in
// workflows/ and synthetic/, and its recorded calls in trace.jsonl (one
// record a line: the request with the task file before the call, the
// response or thrown message, whether the file was written, and the file
// after). Flow's guidance prose is recorded as "<guidance>" and earlier task
// descriptions as "<prior description>"; Check compares everything else.
//
// Records are compared as flow would have to answer them, except for the
// documented deviations (Deviations), which Check verifies to differ in
// exactly the documented way.
package flowtrace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/taskfile"
)

// EnvDir names the environment variable holding the compat directory.
const EnvDir = "TASKD_COMPAT_DIR"

// Dir returns the compat directory, or skips the test when none is set.
func Dir(t testing.TB) string {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		t.Skipf("%s is not set: point it at a flow compat directory (such as ../shared/compat/flow-v2.1.0) to replay flow's recorded Navigate calls", EnvDir)
	}
	return dir
}

// A Record is one recorded Navigate call.
type Record struct {
	ID  string // as recorded, e.g. "probe/33 retryCount as string concatenates"
	Key string // the id up to its first space, e.g. "probe/33"

	req       *taskfile.Object
	threw     string // the thrown message, when Kind is "throw"
	kind      string // "ok", "error" (a returned error object) or "throw"
	response  any
	written   bool
	taskAfter any
	warnings  []string
}

// Load reads the records of dir/trace.jsonl in order.
func Load(dir string) ([]*Record, error) {
	f, err := fsroot.OpenRegular(filepath.Join(dir, "trace.jsonl"), os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []*Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		v, err := taskfile.ParseValue(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("trace.jsonl:%d: %w", line, err)
		}
		o, ok := v.(*taskfile.Object)
		if !ok {
			return nil, fmt.Errorf("trace.jsonl:%d: not an object", line)
		}
		r := &Record{req: o.Object("request")}
		r.ID, _ = o.String("id")
		r.Key, _, _ = strings.Cut(r.ID, " ")
		r.kind, _ = o.String("responseKind")
		if th := o.Object("threw"); th != nil {
			r.threw, _ = th.String("message")
		}
		r.response, _ = o.Get("response")
		r.written, _ = o.Bool("written")
		r.taskAfter, _ = o.Get("taskAfter")
		ws, _ := o.Get("warnings")
		for _, w := range asArray(ws) {
			s, _ := w.(string)
			r.warnings = append(r.warnings, s)
		}
		if r.req == nil {
			return nil, fmt.Errorf("trace.jsonl:%d: no request", line)
		}
		recs = append(recs, r)
	}
	return recs, sc.Err()
}

func asArray(v any) []any { a, _ := v.([]any); return a }

// Workflows returns flow's workflow definitions in dir (workflows/*.json
// and synthetic/*.json) by id, the file name without ".json".
func Workflows(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, sub := range []string{"workflows", "synthetic"} {
		files, err := filepath.Glob(filepath.Join(dir, sub, "*.json"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, f := range files {
			data, err := fsroot.ReadRegular(f)
			if err != nil {
				return nil, err
			}
			out[strings.TrimSuffix(filepath.Base(f), ".json")] = data
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no workflows in %s", dir)
	}
	return out, nil
}

// Input returns the record's Navigate parameters (the task aside).
func (r *Record) Input() navigator.Input {
	in := navigator.Input{
		WorkflowType: r.str("workflowType"),
		Result:       r.str("result"),
		Description:  r.str("description"),
		StepID:       r.str("stepId"),
		ProjectRoot:  r.str("projectRoot"),
	}
	if b, ok := r.req.Bool("autonomy"); ok {
		in.Autonomy = &b
	}
	return in
}

func (r *Record) str(key string) string { s, _ := r.req.String(key); return s }

// HasAutonomy reports whether the request passed autonomy, and its value.
func (r *Record) HasAutonomy() (value, ok bool) { return r.req.Bool("autonomy") }

// SourceRoot is the source root the recording registered for the workflow.
func (r *Record) SourceRoot() string { return r.str("sourceRoot") }

// TaskFileName is the task file's name ("7.json"), or "" without a task.
func (r *Record) TaskFileName() string { return r.str("taskFileName") }

// TaskFileMissing reports whether the recording had no file at all.
func (r *Record) TaskFileMissing() bool { b, _ := r.req.Bool("taskFileMissing"); return b }

// TaskFileRaw returns the file's raw contents when the recording wrote
// bytes rather than a task.
func (r *Record) TaskFileRaw() (string, bool) { return r.req.String("taskFileRaw") }

// Task returns a copy of the task file's contents before the call, or nil.
func (r *Record) Task() *taskfile.Object { return r.req.Object("task").Clone() }

// TaskAfter returns a copy of the task file as flow left it, or nil.
func (r *Record) TaskAfter() *taskfile.Object {
	o, _ := r.taskAfter.(*taskfile.Object)
	return o.Clone()
}

// InlineWorkflows returns the workflows the request registered itself, as
// JSON by id.
func (r *Record) InlineWorkflows() map[string][]byte {
	wfs := r.req.Object("workflows")
	if wfs == nil {
		return nil
	}
	out := map[string][]byte{}
	for _, id := range wfs.Keys() {
		v, _ := wfs.Get(id)
		out[id] = taskfile.MarshalIndent(v)
	}
	return out
}

// Threw returns the thrown message, if the call threw.
func (r *Record) Threw() (string, bool) { return r.threw, r.kind == "throw" }

// NavTask converts a task document into the navigator's view of it, as
// taskd's readers do. stem is the file name without ".json".
func NavTask(stem string, doc *taskfile.Object) *navigator.Task {
	t := &navigator.Task{Stem: stem}
	t.ID, t.HasID = doc.Get("id")
	md, _ := doc.Get("metadata")
	switch md := md.(type) {
	case *taskfile.Object:
		t.Metadata = make(map[string]any, md.Len())
		for _, k := range md.Keys() {
			t.Metadata[k], _ = md.Get(k)
		}
	case nil:
	default:
		if md != false && md != "" && md != json.Number("0") {
			t.Metadata = map[string]any{}
		}
	}
	return t
}
