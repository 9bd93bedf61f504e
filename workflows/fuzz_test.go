package workflows

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/navigator"
)

// FuzzLoad loads arbitrary workflow files the way user directories are
// loaded (define is what LoadFile does after reading the file), validates
// them and draws them: nothing may panic, and a file that parses always
// yields a definition with a workflow and a diagram. Seeds are the
// built-ins and testdata/invalid; more in testdata/fuzz/FuzzLoad. Run it
// longer with: go test -fuzz=FuzzLoad ./workflows
//
// The target works on bytes, not on a file rewritten per input: a write per
// execution made the engine stall for seconds on writeback and fuzz twenty
// times fewer inputs, and LoadFile's own reading is covered by the loading
// tests.
func FuzzLoad(f *testing.F) {
	for _, d := range Builtin() {
		f.Add(d.Data)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "invalid", "*.json"))
	for _, file := range files {
		data, _ := os.ReadFile(file)
		f.Add(data)
	}
	const path = "/lists/l/workflows/w.json"
	f.Fuzz(func(t *testing.T, data []byte) {
		d := define("w", data, path, filepath.Dir(path), false)
		if _, perr := navigator.Parse(data); (perr == nil) != (d.Workflow != nil) {
			t.Fatalf("Parse error %v but definition %+v", perr, d)
		}
		if d.Workflow != nil && !strings.HasPrefix(Diagram(d.Workflow), "flowchart TD\n") {
			t.Fatal("bad diagram")
		}
		for _, p := range d.Problems {
			if p.Reason == "" || p.File != path {
				t.Fatalf("problem without reason or file: %+v", p)
			}
		}
	})
}
