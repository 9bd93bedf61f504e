package navigator_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/navigator"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// The golden tests pin whole answers: the response JSON, field for field
// and in order, and the write-through. Regenerate with
//
//	go test ./navigator -run TestGolden -update
//
// and read the diff: every change is a change of taskd's external
// behaviour.
var goldenTests = []struct {
	name string
	root string // the workflow's source root
	task *navigator.Task
	in   navigator.Input
}{
	{"start-context", "/wf", nil, navigator.Input{WorkflowType: "ship", Description: "Speed up exports", ProjectRoot: "/proj"}},
	{"start-no-roots", "", nil, navigator.Input{WorkflowType: "ship"}},
	{"retry", "", at("ship", "run_tests", 1, "userDescription", "Speed up exports"), navigator.Input{Result: "failed"}},
	{"escalate", "", at("ship", "run_tests", 2, "userDescription", "Speed up exports"), navigator.Input{Result: "failed"}},
	{"success", "", at("ship", "publish", 0, "userDescription", "Speed up exports"), navigator.Input{Result: "passed"}},
	{"fork", "", at("ship", "run_tests", 0, "userDescription", "Speed up exports", "priority", 2), navigator.Input{Result: "passed", Autonomy: ptr(true)}},
	{"fork-missing-entry", "", at("stages", "fork", 0), navigator.Input{}},
	{"join", "", at("ship", "write_docs", 0, "parentTaskId", "6", "branchName", "docs"), navigator.Input{Result: "passed"}},
	{"instructions", "/wf", at("ship", "join_checks", 0), navigator.Input{Result: "passed", Description: "Release 1.2"}},
	{"no-match", "", at("edges", "9", 3), navigator.Input{Result: "passed"}},
	{"no-outgoing", "", at("ship", "done", 0), navigator.Input{Result: "passed"}},
	{"id-mismatch", "", &navigator.Task{Stem: "7", ID: json.Number("9"), HasID: true,
		Metadata: map[string]any{"workflowType": "ship", "currentStep": "implement"}}, navigator.Input{Result: "passed"}},
	{"autonomy-into-fork", "", at("stages", "two", 0, "userDescription", "Docs"), navigator.Input{Result: "passed", Autonomy: ptr(true)}},
}

func TestGolden(t *testing.T) {
	cat := mustCatalog(t)
	for _, tt := range goldenTests {
		t.Run(tt.name, func(t *testing.T) {
			cat.root = tt.root
			got := golden(t, cat, tt.task, tt.in)
			path := filepath.Join("testdata", "golden", tt.name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs; got:\n%s", path, got)
			}
		})
	}
}

// golden renders one navigation: the response (or error object) exactly as
// encoded, then the write-through.
func golden(t *testing.T, cat navigator.Catalog, tk *navigator.Task, in navigator.Input) []byte {
	resp, wt, err := navigator.Navigate(cat, tk, in)
	var out bytes.Buffer
	var raw []byte
	var nm *navigator.NoMatchError
	switch {
	case errors.As(err, &nm):
		raw, _ = nm.MarshalJSON()
	case err != nil:
		t.Fatal(err)
	default:
		raw = resp.AppendJSON(nil)
	}
	if !json.Valid(raw) {
		t.Fatalf("invalid JSON: %s", raw)
	}
	out.WriteString("// response\n")
	json.Indent(&out, raw, "", "  ")
	out.WriteString("\n// write-through\n")
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(wt)
	return out.Bytes()
}
