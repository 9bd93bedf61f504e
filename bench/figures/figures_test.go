package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSplice: the figures replace what lies between the markers, and
// only that; a page without them is an error that names the marker.
func TestSplice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "proof.md")
	page := "# Proof\n\nBefore.\n<!-- figures:begin -->\nold figures\n<!-- figures:end -->\nAfter.\n"
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second time replaces the first's block
		if err := splice(path, "| new | 1 |\n"); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(path)
	if want := "# Proof\n\nBefore.\n<!-- figures:begin -->\n| new | 1 |\n<!-- figures:end -->\nAfter.\n"; string(got) != want {
		t.Errorf("spliced:\n%s\nwant\n%s", got, want)
	}
	for page, marker := range map[string]string{
		"no markers\n":                       "figures:begin",
		"<!-- figures:begin -->\nunclosed\n": "figures:end",
	} {
		if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := splice(path, "x"); err == nil || !strings.Contains(err.Error(), marker) {
			t.Errorf("splice of %q = %v, want an error naming %s", page, err, marker)
		}
		if got, _ := os.ReadFile(path); string(got) != page {
			t.Errorf("a failed splice changed the page to %q", got)
		}
	}
}

// TestParseBench: go test -bench lines by benchmark and unit, the CPU
// suffix dropped, the median of repeated runs kept, other lines ignored.
func TestParseBench(t *testing.T) {
	out := `goos: linux
BenchmarkMove-2         	   12345	     98765 ns/op	     512 B/op	       3 allocs/op
BenchmarkMove-2         	   12345	     90000 ns/op	     512 B/op	       3 allocs/op
BenchmarkMove-2         	   12345	    100000 ns/op	     512 B/op	       3 allocs/op
BenchmarkClaim          	       1	         2.5 ms/median	         4.0 ms/p99
--- BENCH: BenchmarkIgnored
PASS
ok  	github.com/taskd/taskd/taskfile	3.2s
`
	got := parseBench(out)
	for _, tt := range []struct {
		bench, unit string
		want        float64
	}{
		{"BenchmarkMove", "ns/op", 98765},
		{"BenchmarkMove", "allocs/op", 3},
		{"BenchmarkClaim", "ms/median", 2.5},
		{"BenchmarkClaim", "ms/p99", 4},
	} {
		if v := got[tt.bench][tt.unit]; v != tt.want {
			t.Errorf("%s %s = %v, want %v", tt.bench, tt.unit, v, tt.want)
		}
	}
	if len(got) != 2 {
		t.Errorf("benchmarks %v, want two", got)
	}
}

// TestFormat: how figures are written.
func TestFormat(t *testing.T) {
	for _, tt := range []struct {
		got, want string
	}{
		{num(0), "0"}, {num(0.123), "0.12"}, {num(9.999), "10.00"}, {num(12.34), "12.3"},
		{num(100), "100"}, {num(1234567.8), "1,234,568"}, {thousands(999), "999"}, {thousands(1000), "1,000"},
		{unit(""), ""}, {unit("ms"), " ms"},
		{tail("a\nb\nc\n", 2), "b\nc\n"}, {tail("a\n", 5), "a\n"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	if m := median([]float64{5, 1, 3}); m != 3 {
		t.Errorf("median = %v", m)
	}
}

// TestLogged: the log lines of a test's output that carry a figure,
// without their file:line.
func TestLogged(t *testing.T) {
	out := "=== RUN   TestStorm\n    storm_test.go:120: storm: 200 tasks, 40 kills\n    storm_test.go:121: other\n    writers_test.go:9: storm: again\n--- PASS: TestStorm\n"
	if got, want := logged(out, "storm:"), []string{"storm: 200 tasks, 40 kills", "storm: again"}; !slices.Equal(got, want) {
		t.Errorf("logged = %q, want %q", got, want)
	}
}
