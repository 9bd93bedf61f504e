package navigator_test

import (
	"testing"

	"github.com/taskd/taskd/navigator"
)

// BenchmarkNavigate measures the pure part of an advance: Navigate plus
// encoding its response, with the write-through as data. The daemon's whole
// in-memory cycle, with the task file parsed and re-encoded, is
// daemon.BenchmarkNavigateWrite.
func BenchmarkNavigate(b *testing.B) {
	cat := mustCatalog(b)
	for _, bc := range []struct {
		name string
		task *navigator.Task
		in   navigator.Input
	}{
		{"advance", at("ship", "implement", 1, "userDescription", "Speed up exports"), navigator.Input{Result: "passed"}},
		{"fork", at("ship", "run_tests", 0, "userDescription", "Speed up exports"), navigator.Input{Result: "passed"}},
		{"current", at("ship", "implement", 1, "userDescription", "Speed up exports"), navigator.Input{}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				resp, wt, err := navigator.Navigate(cat, bc.task, bc.in)
				if err != nil || wt == nil || len(resp.AppendJSON(nil)) == 0 {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "navigations/s")
		})
	}
}

// BenchmarkParse measures decoding a workflow definition: the JSON pass in
// JavaScript key order and the typed workflow built from it.
func BenchmarkParse(b *testing.B) {
	data := []byte(testWorkflows["ship"])
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, err := navigator.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
