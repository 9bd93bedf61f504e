package taskfile_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/taskd/taskd/taskfile"
)

func TestMisnamed(t *testing.T) {
	tests := []struct {
		name string
		bad  bool
		want []string // phrases of the problem and the fix
	}{
		{"7.json", false, nil},
		{"a-b_C.json", false, nil},
		{".7.json", false, nil},
		{".7.json.tmp", false, nil},
		{"7.json.lock", false, nil},
		{"7.json~", false, nil},
		{"notes.txt", false, nil},
		{"a b.json", true, []string{"a space", "mv 'a b.json' a_b.json"}},
		{"täsk.json", true, []string{"non-ASCII letter 'ä'", "mv 'täsk.json' t_sk.json"}},
		{"x.JSON", true, []string{`ends in ".JSON"`, "mv x.JSON x.json"}},
		{"a.b.json", true, []string{"the character '.'", "a_b.json"}},
		{strings.Repeat("x", 129) + ".json", true, []string{"129 bytes long"}},
		{"it's.json", true, []string{`mv 'it'\''s.json' it_s.json`}},
	}
	for _, tt := range tests {
		problem, fix, bad := taskfile.Misnamed(tt.name)
		if bad != tt.bad {
			t.Errorf("Misnamed(%q) = %v, want %v", tt.name, bad, tt.bad)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(problem+" "+fix, w) {
				t.Errorf("Misnamed(%q) says %q / %q, want %q", tt.name, problem, fix, w)
			}
		}
	}
}

func TestDir_Names(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"2.json", "10.json", "a b.json", "x.JSON", ".tmp.json", "notes.md"} {
		os.WriteFile(filepath.Join(dir, n), []byte("{}"), 0o600)
	}
	d, err := taskfile.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids, misnamed, err := d.Names()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"2", "10"}; !slices.Equal(ids, want) {
		t.Errorf("ids %v, want %v", ids, want)
	}
	if want := []string{"a b.json", "x.JSON"}; !slices.Equal(misnamed, want) {
		t.Errorf("misnamed %v, want %v", misnamed, want)
	}
}
