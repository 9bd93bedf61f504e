package navigator_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/taskd/taskd/navigator"
)

// FuzzNavigate loads arbitrary workflow documents and navigates them from
// every mode: nothing may panic, every failure must be an error, and every
// answer must encode to valid JSON. The seed corpus is in
// testdata/fuzz/FuzzNavigate; run it longer with
//
//	go test -fuzz=FuzzNavigate ./navigator
func FuzzNavigate(f *testing.F) {
	for _, src := range testWorkflows {
		for _, step := range []string{"", "start", "a", "run_tests", "fork_checks", "join_checks", "stuck", "9", "fork"} {
			f.Add([]byte(src), step, "failed", int64(1))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, step, result string, retries int64) {
		wf, err := navigator.Parse(data)
		if err != nil {
			return
		}
		problems := navigator.Validate(wf)
		cat := testCatalog{wfs: map[string]*navigator.Workflow{"w": wf}, root: "/src"}
		md := map[string]any{"workflowType": "w", "retryCount": json.Number("0")}
		if step != "" {
			md["currentStep"] = step
			md["retryCount"] = retries
		}
		for _, in := range []navigator.Input{
			{WorkflowType: "w", StepID: step, ProjectRoot: "/p"},
			{Result: result, Autonomy: ptr(true), ProjectRoot: "/p"},
			{Result: "passed"},
			{},
		} {
			var task *navigator.Task
			if in.WorkflowType == "" {
				task = &navigator.Task{Stem: "1", Metadata: md}
			}
			resp, wt, err := navigator.Navigate(cat, task, in)
			var nm *navigator.NoMatchError
			switch {
			case errors.As(err, &nm):
				if data, _ := nm.MarshalJSON(); !json.Valid(data) {
					t.Fatalf("invalid error object JSON: %s", data)
				}
			case err != nil:
				if err.Error() == "" {
					t.Fatal("empty error message")
				}
			default:
				if resp == nil || (task != nil && wt == nil) {
					t.Fatalf("no response or write-through without an error")
				}
				if data := resp.AppendJSON(nil); !json.Valid(data) {
					t.Fatalf("invalid response JSON: %s", data)
				}
				if !navigator.HasErrors(problems) && resp.Action == "" {
					t.Fatalf("valid workflow, empty action")
				}
			}
		}
	})
}
