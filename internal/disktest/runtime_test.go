package disktest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLeftovers: folders left empty are no leftovers; a file, however
// deep, or a link is; a folder that is not there has none.
func TestLeftovers(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"results/l-1/1/1", "empty"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if got := Leftovers(dir); len(got) != 0 {
		t.Fatalf("Leftovers of empty folders = %v, want none", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "results/l-1/1/1/result.json"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(dir, "held-1.json")); err != nil {
		t.Fatal(err)
	}
	got, want := Leftovers(dir), []string{"held-1.json", "results/l-1/1/1/result.json"}
	if !slices.Equal(got, want) {
		t.Errorf("Leftovers = %v, want %v", got, want)
	}
	if got := Leftovers(filepath.Join(dir, "none")); len(got) != 0 {
		t.Errorf("Leftovers of no folder = %v, want none", got)
	}
}
