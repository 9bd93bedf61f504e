package workflows_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/workflows"
)

// TestDiagram pins the Mermaid rendering of two built-ins (a fork/join and
// command steps). Regenerate with: go test ./workflows -run TestDiagram -update
func TestDiagram(t *testing.T) {
	s, _ := workflows.Load()
	for _, id := range []string{"parallel-checks", "command-check"} {
		wf, _, ok := s.Lookup(id)
		if !ok {
			t.Fatalf("no workflow %s", id)
		}
		got := workflows.Diagram(wf)
		path := filepath.Join("testdata", "diagram", id+".mmd")
		if *update {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if got != string(want) {
			t.Errorf("%s differs; got:\n%s", path, got)
		}
	}
}
