package flowtrace

import (
	"fmt"
	"strings"

	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/taskfile"
)

// A Deviation is a documented, deliberate difference from flow.
type Deviation string

// The deviations of docs/navigator.md.
const (
	// AutonomyOff: an explicit autonomy=false switches a stored true off;
	// the advance writes (and reports) "autonomy": false where flow keeps
	// the stored true.
	AutonomyOff Deviation = "autonomy=false switches autonomy off"
	// RetryCount: retryCount and maxRetries are numbers; the string "1" is
	// 1, so a retry makes it 2 where flow makes "11".
	RetryCount Deviation = "numeric retryCount"
	// AutonomyFork: autonomy continuing across a stage boundary into a fork
	// answers with a fork response and a metadata-only write, where flow
	// builds a plain step response and the branches are skipped.
	AutonomyFork Deviation = "autonomy into a fork"
)

// deviations lists every record taskd answers differently on purpose, by
// record key. docs/navigator.md lists the same keys.
var deviations = map[string]Deviation{
	"probe/33":               RetryCount,
	"probe/44":               AutonomyFork,
	"probe/46":               AutonomyFork,
	"synthetic-stages#0/003": AutonomyFork,
	"probe/45":               AutonomyOff,
}

func init() {
	for _, k := range []string{
		"agile-task#0/003", "agile-task#0/004", "agile-task#0/005", "agile-task#0/006",
		"build-review-murder-board#0/003", "build-review-murder-board#0/004", "build-review-murder-board#0/005",
		"build-review-murder-board#0/006", "build-review-murder-board#0/007", "build-review-murder-board#0/008",
		"synthetic-edges#0/003", "synthetic-edges#0/004", "synthetic-edges#0/005", "synthetic-edges#0/006",
		"test-coverage#0/003", "test-coverage#0/004", "test-coverage#0/005", "test-coverage#0/006",
		"test-coverage#0/007", "test-coverage#0/008", "test-coverage#0/009", "test-coverage#0/010",
		"test-coverage#0/011", "test-coverage#0/012", "test-coverage#0/013", "test-coverage#0/014",
		"test-coverage#0/015",
	} {
		deviations[k] = AutonomyOff
	}
}

// Deviation returns the documented deviation of the record, or "".
func (r *Record) Deviation() Deviation { return deviations[r.Key] }

// Deviations returns every deviating record key with its deviation.
func Deviations() map[string]Deviation {
	out := make(map[string]Deviation, len(deviations))
	for k, v := range deviations {
		out[k] = v
	}
	return out
}

// An Outcome is what taskd did with a record's request.
type Outcome struct {
	Threw     string // the message of an error other than a returned error object
	Response  []byte // the response or returned error object as JSON; nil when it threw
	Written   bool   // whether the task file was written
	TaskAfter []byte // the task file after the call, as JSON, when written
	Warnings  []string
}

// Check compares an outcome with the record and returns what differs,
// allowing for the record's deviation. Taskd's own guidance in the
// response and task must already be replaced by "<guidance>" (Normalize).
func (r *Record) Check(o Outcome) []string {
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	if r.kind == "throw" {
		switch {
		case o.Response != nil:
			add("threw %q in flow, answered %s", r.threw, o.Response)
		case o.Threw != r.threw:
			add("threw %q, want %q", o.Threw, r.threw)
		}
		return diffs
	}
	if o.Response == nil {
		return append(diffs, fmt.Sprintf("threw %q, want a response", o.Threw))
	}
	got, err := taskfile.ParseValue(o.Response)
	if err != nil {
		return append(diffs, fmt.Sprintf("response is not JSON: %v", err))
	}
	wantResp, wantAfter := r.response, r.taskAfter
	switch r.Deviation() {
	case AutonomyOff:
		wantResp, wantAfter = withMetadata(wantResp, "autonomy", false), withMetadata(wantAfter, "autonomy", false)
	case RetryCount:
		wantResp, wantAfter = withMetadata(wantResp, "retryCount", 2), withMetadata(wantAfter, "retryCount", 2)
	case AutonomyFork:
		return append(diffs, r.checkAutonomyFork(got, o)...)
	}
	if r.Deviation() != "" && encode(got) == encode(r.response) {
		add("documented as deviating (%s) but the response is flow's", r.Deviation())
	}
	if g, w := encode(got), encode(wantResp); g != w {
		add("response differs:\n got: %s\nwant: %s", g, w)
	}
	if o.Written != r.written {
		add("written = %v, want %v", o.Written, r.written)
	}
	if r.written && o.Written {
		after, err := taskfile.ParseValue(o.TaskAfter)
		if err != nil {
			add("task file after is not JSON: %v", err)
		} else if g, w := encode(after), encode(wantAfter); g != w {
			add("task file after differs:\n got: %s\nwant: %s", g, w)
		}
	}
	if g, w := strings.Join(o.Warnings, "\n"), strings.Join(r.warnings, "\n"); g != w {
		add("warnings = %q, want %q", g, w)
	}
	return diffs
}

// checkAutonomyFork checks the fork response taskd gives where flow
// continued into the fork as if it were a step.
func (r *Record) checkAutonomyFork(got any, o Outcome) []string {
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	g, _ := got.(*taskfile.Object)
	w, _ := r.response.(*taskfile.Object)
	if g == nil || w == nil {
		return []string{"want an ok response"}
	}
	if a, _ := g.String("action"); a != "fork" {
		add("action = %q, want fork", a)
	}
	if c, _ := g.Bool("autonomyContinued"); !c {
		add("autonomyContinued = false, want true")
	}
	if gs, ws := encode(g.Object("metadata")), encode(w.Object("metadata")); gs != ws {
		add("metadata = %s, want %s", gs, ws)
	}
	if f := g.Object("fork"); f == nil || f.Object("branches").Len() == 0 {
		add("no fork branches")
	}
	if !o.Written {
		add("not written, want a metadata-only write")
		return diffs
	}
	// Metadata-only: the task as before, with flow's merged metadata.
	want := r.Task()
	want.Set("metadata", r.taskAfter.(*taskfile.Object).Object("metadata"))
	after, err := taskfile.ParseValue(o.TaskAfter)
	if err != nil {
		return append(diffs, fmt.Sprintf("task file after is not JSON: %v", err))
	}
	if gs, ws := encode(after), encode(want); gs != ws {
		add("task file after differs:\n got: %s\nwant: %s", gs, ws)
	}
	return diffs
}

// withMetadata returns a copy of the recorded object v with one metadata
// key set: how a deviation changes flow's answer.
func withMetadata(v any, key string, value any) any {
	o, ok := v.(*taskfile.Object)
	if !ok {
		return v
	}
	o = o.Clone()
	o.EnsureObject("metadata").Set(key, value)
	return o
}

func encode(v any) string {
	if v == nil {
		return "null"
	}
	if o, ok := v.(*taskfile.Object); ok && o == nil {
		return "null"
	}
	return string(taskfile.MarshalIndent(v))
}

// Normalize returns a copy of resp with taskd's guidance replaced by
// "<guidance>", as the recording replaced flow's: the guidance field of
// every step (the response's and each fork branch's) and its text inside
// the orchestrator instructions.
func Normalize(resp *navigator.Response) *navigator.Response {
	if resp == nil {
		return nil
	}
	c := *resp
	if si := resp.StepInstructions; si != nil {
		c.StepInstructions = &navigator.StepInstructions{Name: si.Name, Description: si.Description, Guidance: "<guidance>"}
		c.OrchestratorInstructions = strings.Replace(resp.OrchestratorInstructions, si.Guidance, "<guidance>", 1)
	}
	if f := resp.Fork; f != nil {
		fc := *f
		fc.Branches = append([]navigator.ForkBranch(nil), f.Branches...)
		for i := range fc.Branches {
			b := &fc.Branches[i]
			if si := b.StepInstructions; si != nil {
				b.StepInstructions = &navigator.StepInstructions{Name: si.Name, Description: si.Description, Guidance: "<guidance>"}
				b.OrchestratorInstructions = strings.Replace(b.OrchestratorInstructions, si.Guidance, "<guidance>", 1)
			}
		}
		c.Fork = &fc
	}
	return &c
}

// NormalizeJSON is Normalize for a response already encoded as JSON (as
// `taskd navigate` prints it). It also returns the step's guidance, to
// normalize the task description written from it with strings.Replace.
func NormalizeJSON(data []byte) (normalized []byte, guidance string, err error) {
	v, err := taskfile.ParseValue(data)
	if err != nil {
		return nil, "", err
	}
	o, ok := v.(*taskfile.Object)
	if !ok {
		return data, "", nil
	}
	step := func(o *taskfile.Object) string {
		si := o.Object("stepInstructions")
		g, ok := si.String("guidance")
		if !ok {
			return ""
		}
		si.Set("guidance", "<guidance>")
		if oi, ok := o.String("orchestratorInstructions"); ok {
			o.Set("orchestratorInstructions", strings.Replace(oi, g, "<guidance>", 1))
		}
		return g
	}
	guidance = step(o)
	if br := o.Object("fork").Object("branches"); br != nil {
		for _, k := range br.Keys() {
			if b := br.Object(k); b != nil {
				step(b)
			}
		}
	}
	return taskfile.MarshalIndent(o), guidance, nil
}

// NormalizeText replaces the guidance of resp's step inside s (a task
// description written from the response) by "<guidance>".
func NormalizeText(s string, resp *navigator.Response) string {
	if resp == nil || resp.StepInstructions == nil {
		return s
	}
	return strings.Replace(s, resp.StepInstructions.Guidance, "<guidance>", 1)
}

// ApplyFlow applies a write-through to a task document exactly as flow's
// write-through changes the parsed file: metadata merged key by key,
// then id, subject, activeForm and description assigned, each keeping its
// position or appended in that order.
func ApplyFlow(doc *taskfile.Object, wt *navigator.WriteThrough) {
	md := doc.EnsureObject("metadata")
	for _, f := range wt.Metadata {
		md.Set(f.Key, f.Value)
	}
	doc.Set("id", wt.ID)
	if wt.Mode != navigator.WriteFull {
		return
	}
	doc.Set("subject", wt.Subject)
	doc.Set("activeForm", wt.ActiveForm)
	if wt.SetDescription {
		doc.Set("description", wt.Description)
	}
}
