package workflows_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/workflows"
)

// FuzzLoad loads arbitrary workflow files the way user directories are
// loaded, validates them and draws them: nothing may panic, and a file that
// parses always yields a definition with a workflow and a diagram. Seeds are
// the built-ins and testdata/invalid; more in testdata/fuzz/FuzzLoad. Run it
// longer with: go test -fuzz=FuzzLoad ./workflows
func FuzzLoad(f *testing.F) {
	for _, d := range workflows.Builtin() {
		f.Add(d.Data)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "invalid", "*.json"))
	for _, file := range files {
		data, _ := os.ReadFile(file)
		f.Add(data)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "w.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := workflows.LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, perr := navigator.Parse(data); (perr == nil) != (d.Workflow != nil) {
			t.Fatalf("Parse error %v but definition %+v", perr, d)
		}
		if d.Workflow != nil && !strings.HasPrefix(workflows.Diagram(d.Workflow), "flowchart TD\n") {
			t.Fatal("bad diagram")
		}
		for _, p := range d.Problems {
			if p.Reason == "" || p.File != path {
				t.Fatalf("problem without reason or file: %+v", p)
			}
		}
	})
}
