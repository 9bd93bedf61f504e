package flowtrace_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/taskd/taskd/internal/jsonorder"
	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/navigator/flowtrace"
	"github.com/taskd/taskd/taskfile"
)

// A small compat directory: four records (an answer with a write, a
// throw, two documented deviations) and three workflows.
const trace = `{"id":"demo#0/001 start","responseKind":"ok","request":{"workflowType":"demo","result":"passed","description":"d","stepId":"s","projectRoot":"/p","autonomy":true,"sourceRoot":"/src","taskFileName":"7.json","task":{"id":"7","subject":"x","metadata":{"a":1}},"workflows":{"inline":{"id":"inline"}}},"response":{"currentStep":"work","metadata":{"retryCount":0}},"written":true,"taskAfter":{"id":"7","subject":"y","metadata":{"a":1,"currentStep":"work"}},"warnings":["w1"]}

{"id":"probe/9 throws","responseKind":"throw","threw":{"message":"Workflow 'x' not found"},"request":{"taskFileMissing":true,"taskFileRaw":"{oops"}}
{"id":"probe/33 retryCount as string concatenates","responseKind":"ok","request":{},"response":{"metadata":{"retryCount":"11"}},"written":false}
{"id":"probe/44 autonomy into a fork","responseKind":"ok","request":{"task":{"id":"7","subject":"x","metadata":{"a":1}}},"response":{"action":"step","metadata":{"currentStep":"fork1"}},"written":true,"taskAfter":{"id":"7","subject":"flow's","metadata":{"a":1,"currentStep":"fork1"}}}
`

func compatDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range map[string]string{
		"trace.jsonl":         trace,
		"workflows/b.json":    `{"id":"b"}`,
		"workflows/a.json":    `{"id":"a"}`,
		"workflows/notes.txt": "not a workflow",
		"synthetic/s.json":    `{"id":"s"}`,
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func load(t *testing.T) []*flowtrace.Record {
	t.Helper()
	recs, err := flowtrace.Load(compatDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4 (blank lines skipped)", len(recs))
	}
	return recs
}

// TestLoad: a record's request as its accessors give it.
func TestLoad(t *testing.T) {
	recs := load(t)
	r := recs[0]
	in := r.Input()
	auto, hasAuto := r.HasAutonomy()
	for _, tt := range []struct {
		name      string
		got, want any
	}{
		{"ID", r.ID, "demo#0/001 start"},
		{"Key", r.Key, "demo#0/001"},
		{"Input", in.WorkflowType + "|" + in.Result + "|" + in.Description + "|" + in.StepID + "|" + in.ProjectRoot, "demo|passed|d|s|/p"},
		{"Input.Autonomy", in.Autonomy != nil && *in.Autonomy, true},
		{"HasAutonomy", [2]bool{auto, hasAuto}, [2]bool{true, true}},
		{"SourceRoot", r.SourceRoot(), "/src"},
		{"TaskFileName", r.TaskFileName(), "7.json"},
		{"TaskFileMissing", r.TaskFileMissing(), false},
		{"Task", string(taskfile.MarshalIndent(r.Task())), string(taskfile.MarshalIndent(mustObject(t, `{"id":"7","subject":"x","metadata":{"a":1}}`)))},
		{"TaskAfter subject", str(r.TaskAfter(), "subject"), "y"},
		{"InlineWorkflows", strings.Join(slices.Sorted(maps.Keys(r.InlineWorkflows())), ","), "inline"},
		{"Deviation", r.Deviation(), flowtrace.Deviation("")},
		{"second: TaskFileMissing", recs[1].TaskFileMissing(), true},
		{"second: no autonomy", recs[1].Input().Autonomy == nil, true},
		{"second: no task", recs[1].Task() == nil, true},
		{"second: no inline workflows", recs[1].InlineWorkflows() == nil, true},
		{"third: Deviation", recs[2].Deviation(), flowtrace.RetryCount},
	} {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if msg, threw := recs[1].Threw(); !threw || msg != "Workflow 'x' not found" {
		t.Errorf("Threw = %q, %v", msg, threw)
	}
	if _, threw := r.Threw(); threw {
		t.Error("an answered record threw")
	}
	if raw, ok := recs[1].TaskFileRaw(); !ok || raw != "{oops" {
		t.Errorf("TaskFileRaw = %q, %v", raw, ok)
	}
	// The copies are copies.
	r.Task().Set("subject", "changed")
	if str(r.Task(), "subject") != "x" {
		t.Error("Task returned the record's own object")
	}
}

// TestLoad_Errors: a line that is not a record is an error naming it.
func TestLoad_Errors(t *testing.T) {
	for _, tt := range []struct{ data, want string }{
		{`{"request":{}}` + "\n{not json\n", "trace.jsonl:2:"},
		{"[1]\n", "trace.jsonl:1: not an object"},
		{`{"id":"x"}` + "\n", "trace.jsonl:1: no request"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "trace.jsonl"), []byte(tt.data), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := flowtrace.Load(dir); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%q) = %v, want %q", tt.data, err, tt.want)
		}
	}
	if _, err := flowtrace.Load(t.TempDir()); err == nil {
		t.Error("Load of a directory without trace.jsonl succeeded")
	}
}

// TestWorkflows: the .json files of workflows/ and synthetic/, by id.
func TestWorkflows(t *testing.T) {
	wfs, err := flowtrace.Workflows(compatDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(slices.Sorted(maps.Keys(wfs)), ","); got != "a,b,s" {
		t.Errorf("workflows %s, want a,b,s", got)
	}
	if string(wfs["s"]) != `{"id":"s"}` {
		t.Errorf("s = %s", wfs["s"])
	}
	if _, err := flowtrace.Workflows(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no workflows") {
		t.Errorf("Workflows of an empty directory = %v", err)
	}
}

// TestDir: the compat directory comes from the environment.
func TestDir(t *testing.T) {
	t.Setenv(flowtrace.EnvDir, "/compat")
	if got := flowtrace.Dir(t); got != "/compat" {
		t.Errorf("Dir = %s", got)
	}
}

// TestCheck: what Check reports of an outcome against each kind of record.
func TestCheck(t *testing.T) {
	recs := load(t)
	answer, thrown, deviating, fork := recs[0], recs[1], recs[2], recs[3]
	forkAfter := []byte(`{"id":"7","subject":"x","metadata":{"a":1,"currentStep":"fork1"}}`)
	after := `{"id":"7","subject":"y","metadata":{"a":1,"currentStep":"work"}}`
	for _, tt := range []struct {
		name string
		rec  *flowtrace.Record
		o    flowtrace.Outcome
		want []string // parts of each difference, in order
	}{
		{name: "the same", rec: answer, o: flowtrace.Outcome{Response: []byte(`{"currentStep":"work","metadata":{"retryCount":0}}`), Written: true, TaskAfter: []byte(after), Warnings: []string{"w1"}}},
		{name: "another response", rec: answer, o: flowtrace.Outcome{Response: []byte(`{"currentStep":"review","metadata":{"retryCount":0}}`), Written: true, TaskAfter: []byte(after), Warnings: []string{"w1"}},
			want: []string{"response differs"}},
		{name: "not written, no warning", rec: answer, o: flowtrace.Outcome{Response: []byte(`{"currentStep":"work","metadata":{"retryCount":0}}`)},
			want: []string{"written = false, want true", `warnings = "", want "w1"`}},
		{name: "another file after", rec: answer, o: flowtrace.Outcome{Response: []byte(`{"currentStep":"work","metadata":{"retryCount":0}}`), Written: true, TaskAfter: []byte(`{"id":"7"}`), Warnings: []string{"w1"}},
			want: []string{"task file after differs"}},
		{name: "a file after that is not JSON", rec: answer, o: flowtrace.Outcome{Response: []byte(`{"currentStep":"work","metadata":{"retryCount":0}}`), Written: true, TaskAfter: []byte(`{`), Warnings: []string{"w1"}},
			want: []string{"task file after is not JSON"}},
		{name: "threw instead of answering", rec: answer, o: flowtrace.Outcome{Threw: "boom"}, want: []string{`threw "boom", want a response`}},
		{name: "a response that is not JSON", rec: answer, o: flowtrace.Outcome{Response: []byte(`nope`)}, want: []string{"response is not JSON"}},
		{name: "the same throw", rec: thrown, o: flowtrace.Outcome{Threw: "Workflow 'x' not found"}},
		{name: "another throw", rec: thrown, o: flowtrace.Outcome{Threw: "other"}, want: []string{`threw "other", want "Workflow 'x' not found"`}},
		{name: "answered a throw", rec: thrown, o: flowtrace.Outcome{Response: []byte(`{}`)}, want: []string{"threw \"Workflow 'x' not found\" in flow, answered {}"}},
		{name: "the documented deviation", rec: deviating, o: flowtrace.Outcome{Response: []byte(`{"metadata":{"retryCount":2}}`)}},
		{name: "flow's answer where a deviation is documented", rec: deviating, o: flowtrace.Outcome{Response: []byte(`{"metadata":{"retryCount":"11"}}`)},
			want: []string{"documented as deviating (numeric retryCount) but the response is flow's", "response differs"}},
		{name: "a fork where flow went on", rec: fork, o: flowtrace.Outcome{
			Response: []byte(`{"action":"fork","autonomyContinued":true,"metadata":{"currentStep":"fork1"},"fork":{"branches":{"a":{}}}}`), Written: true, TaskAfter: forkAfter}},
		{name: "a step where a fork was documented", rec: fork, o: flowtrace.Outcome{Response: []byte(`{"action":"step","metadata":{"currentStep":"x"}}`)},
			want: []string{"action = \"step\", want fork", "autonomyContinued = false", "metadata = ", "no fork branches", "not written"}},
		{name: "a fork written whole", rec: fork, o: flowtrace.Outcome{
			Response: []byte(`{"action":"fork","autonomyContinued":true,"metadata":{"currentStep":"fork1"},"fork":{"branches":{"a":{}}}}`), Written: true,
			TaskAfter: []byte(`{"id":"7","subject":"flow's","metadata":{"a":1,"currentStep":"fork1"}}`)},
			want: []string{"task file after differs"}},
		{name: "a fork answered with no object", rec: fork, o: flowtrace.Outcome{Response: []byte(`[]`)}, want: []string{"want an ok response"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.rec.Check(tt.o)
			if len(got) != len(tt.want) {
				t.Fatalf("Check = %q, want %d differences like %q", got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("difference %d = %q, want it to contain %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestDeviations: the documented deviations, as a copy.
func TestDeviations(t *testing.T) {
	d := flowtrace.Deviations()
	if d["probe/33"] != flowtrace.RetryCount || d["probe/45"] != flowtrace.AutonomyOff || d["probe/44"] != flowtrace.AutonomyFork || d["test-coverage#0/015"] != flowtrace.AutonomyOff {
		t.Errorf("Deviations = %v", d)
	}
	delete(d, "probe/33")
	if flowtrace.Deviations()["probe/33"] == "" {
		t.Error("Deviations returned the package's own map")
	}
}

// TestNormalize: taskd's guidance is replaced by "<guidance>" in the step
// and each fork branch, inside their orchestrator instructions too; the
// original is left alone.
func TestNormalize(t *testing.T) {
	resp := &navigator.Response{
		StepInstructions:         &navigator.StepInstructions{Name: "Work", Description: "d", Guidance: "Do it well."},
		OrchestratorInstructions: "Step Work. Do it well. Then report.",
		Fork: &navigator.Fork{Branches: []navigator.ForkBranch{
			{Name: "a", StepInstructions: &navigator.StepInstructions{Name: "A", Guidance: "Check A."}, OrchestratorInstructions: "Run: Check A."},
			{Name: "b"},
		}},
	}
	got := flowtrace.Normalize(resp)
	for _, tt := range []struct{ got, want string }{
		{got.StepInstructions.Guidance, "<guidance>"},
		{got.StepInstructions.Name, "Work"},
		{got.OrchestratorInstructions, "Step Work. <guidance> Then report."},
		{got.Fork.Branches[0].StepInstructions.Guidance, "<guidance>"},
		{got.Fork.Branches[0].OrchestratorInstructions, "Run: <guidance>"},
		{resp.StepInstructions.Guidance, "Do it well."},
		{resp.Fork.Branches[0].StepInstructions.Guidance, "Check A."},
		{flowtrace.NormalizeText("Your task: Do it well.", resp), "Your task: <guidance>"},
		{flowtrace.NormalizeText("Your task: Do it well.", &navigator.Response{}), "Your task: Do it well."},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	if flowtrace.Normalize(nil) != nil {
		t.Error("Normalize(nil) is not nil")
	}
}

// TestNormalizeJSON: the same for a response encoded as JSON, with the
// guidance returned.
func TestNormalizeJSON(t *testing.T) {
	in := `{"stepInstructions":{"name":"Work","guidance":"Do it."},"orchestratorInstructions":"Now: Do it.","fork":{"branches":{"a":{"stepInstructions":{"guidance":"A."},"orchestratorInstructions":"Go A."}}}}`
	out, guidance, err := flowtrace.NormalizeJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"stepInstructions":{"name":"Work","guidance":"<guidance>"},"orchestratorInstructions":"Now: <guidance>","fork":{"branches":{"a":{"stepInstructions":{"guidance":"<guidance>"},"orchestratorInstructions":"Go <guidance>"}}}}`
	if guidance != "Do it." || compact(t, out) != want {
		t.Errorf("NormalizeJSON = %s, %q\nwant %s", compact(t, out), guidance, want)
	}
	if out, g, err := flowtrace.NormalizeJSON([]byte(`[1]`)); err != nil || string(out) != `[1]` || g != "" {
		t.Errorf("NormalizeJSON of an array = %s, %q, %v", out, g, err)
	}
	if _, _, err := flowtrace.NormalizeJSON([]byte(`{`)); err == nil {
		t.Error("NormalizeJSON of broken JSON succeeded")
	}
}

// TestApplyFlow: metadata merged key by key, then id (and in full mode
// subject, activeForm and description), keeping positions.
func TestApplyFlow(t *testing.T) {
	for _, tt := range []struct {
		name string
		wt   navigator.WriteThrough
		want string
	}{
		{"metadata only", navigator.WriteThrough{Mode: navigator.WriteMetadata, ID: "7", Metadata: []navigator.Field{{Key: "currentStep", Value: "b"}, {Key: "retryCount", Value: 1}}},
			`{"subject":"s","metadata":{"currentStep":"b","keep":true,"retryCount":1},"id":"7"}`},
		{"full", navigator.WriteThrough{Mode: navigator.WriteFull, ID: "7", Subject: "S", ActiveForm: "A", Description: "D", SetDescription: true, Metadata: []navigator.Field{{Key: "currentStep", Value: "c"}}},
			`{"subject":"S","metadata":{"currentStep":"c","keep":true},"id":"7","activeForm":"A","description":"D"}`},
		{"full, description kept", navigator.WriteThrough{Mode: navigator.WriteFull, ID: "7", Subject: "S", ActiveForm: "A"},
			`{"subject":"S","metadata":{"currentStep":"a","keep":true},"id":"7","activeForm":"A"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := mustObject(t, `{"subject":"s","metadata":{"currentStep":"a","keep":true}}`)
			wt := tt.wt
			flowtrace.ApplyFlow(doc, &wt)
			if got := compact(t, taskfile.MarshalIndent(doc)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestNavTask: the navigator's view of a task document's id and metadata,
// as flow reads them: a falsy metadata is none, any other non-object an
// empty one.
func TestNavTask(t *testing.T) {
	for _, tt := range []struct {
		doc          string
		hasID        bool
		metadata     string // "nil" for none
		metadataKeys int
	}{
		{`{"id":"7","metadata":{"a":1,"b":"x"}}`, true, "map", 2},
		{`{"metadata":null}`, false, "nil", 0},
		{`{"metadata":false}`, false, "nil", 0},
		{`{"metadata":""}`, false, "nil", 0},
		{`{"metadata":0}`, false, "nil", 0},
		{`{"metadata":"x"}`, false, "map", 0},
		{`{"metadata":[1]}`, false, "map", 0},
		{`{}`, false, "nil", 0},
	} {
		nt := flowtrace.NavTask("7", mustObject(t, tt.doc))
		got := "map"
		if nt.Metadata == nil {
			got = "nil"
		}
		if nt.Stem != "7" || nt.HasID != tt.hasID || got != tt.metadata || len(nt.Metadata) != tt.metadataKeys {
			t.Errorf("NavTask(%s) = %+v; want hasID %v, metadata %s with %d keys", tt.doc, nt, tt.hasID, tt.metadata, tt.metadataKeys)
		}
	}
}

func mustObject(t *testing.T, s string) *taskfile.Object {
	t.Helper()
	v, err := taskfile.ParseValue([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*taskfile.Object)
}

func str(o *taskfile.Object, key string) string { s, _ := o.String(key); return s }

func compact(t *testing.T, data []byte) string {
	t.Helper()
	v, err := taskfile.ParseValue(data)
	if err != nil {
		t.Fatal(err)
	}
	return string(jsonorder.AppendCompact(nil, v))
}
