package workflows_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/workflows"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestValidate_Invalid loads every broken workflow in testdata/invalid and
// compares its problems, one per line, with the .want file beside it.
// Regenerate with: go test ./workflows -run TestValidate_Invalid -update
func TestValidate_Invalid(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "invalid", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test workflows: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			d, err := workflows.LoadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Problems) == 0 {
				t.Fatalf("no problems found")
			}
			var b strings.Builder
			for _, p := range d.Problems {
				b.WriteString(p.String())
				b.WriteString("\n")
			}
			got := b.String()
			want := strings.TrimSuffix(file, ".json") + ".want"
			if *update {
				if err := os.WriteFile(want, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(data) {
				t.Errorf("problems differ from %s; got:\n%s", want, got)
			}
			if d.OK() != !navigator.HasErrors(d.Problems) {
				t.Errorf("OK() = %v with problems %v", d.OK(), d.Problems)
			}
		})
	}
}
