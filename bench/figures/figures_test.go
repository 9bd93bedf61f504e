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

// TestCostSummary: the sentence under bench/cost's table is made of its
// figures: the floor's, the daemon's over it, and the daemon's own share
// when it has one; no figures for the floor is an error, not a sentence.
func TestCostSummary(t *testing.T) {
	floor := costFigures{CPU: 1.5, Syscalls: 200, OwnSyscalls: 140}
	for _, tt := range []struct {
		name string
		r    costReport
		want string
	}{
		{"strace", costReport{Builds: []costFigures{{CPU: 4.5, Syscalls: 500, OwnSyscalls: 210}}, Floor: floor},
			"The floor — the same durable writes, folders and process start done directly by Go, and nothing else — costs 1.50 ms of CPU and 200 system calls (140 without the Go runtime's timed calls) per task on this machine; the daemon costs 3.00× that in CPU and 2.50× in system calls (1.50× without the timed calls). Of its 4.50 ms per task, 1.50 ms is the work the contract requires done the plainest way, 3.00 ms its own."},
		{"no strace", costReport{Builds: []costFigures{{CPU: 3}}, Floor: costFigures{CPU: 1.5}},
			"The floor — the same durable writes, folders and process start done directly by Go, and nothing else — costs 1.50 ms of CPU per task on this machine; the daemon costs 2.00× that in CPU. Of its 3.00 ms per task, 1.50 ms is the work the contract requires done the plainest way, 1.50 ms its own."},
		{"below the floor", costReport{Builds: []costFigures{{CPU: 1.2}}, Floor: costFigures{CPU: 1.5}},
			"The floor — the same durable writes, folders and process start done directly by Go, and nothing else — costs 1.50 ms of CPU per task on this machine; the daemon costs 0.80× that in CPU."},
	} {
		got, err := costSummary(tt.r)
		if err != nil || got != tt.want {
			t.Errorf("%s: costSummary = %q, %v\nwant %q", tt.name, got, err, tt.want)
		}
	}
	for _, r := range []costReport{{Floor: floor}, {Builds: []costFigures{{CPU: 4}}}} {
		if got, err := costSummary(r); err == nil {
			t.Errorf("costSummary(%+v) = %q, want an error", r, got)
		}
	}
}
