package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// bigRoot writes n tasks into list l of a new root: trees of a parent and
// four children, in every state, a tenth of them running with progress,
// some needing a person.
func bigRoot(b *testing.B, n int) string {
	b.Helper()
	root := filepath.Join(b.TempDir(), "root")
	list := filepath.Join(root, "l")
	if err := os.MkdirAll(list, 0o700); err != nil {
		b.Fatal(err)
	}
	states := []string{"succeeded", "succeeded", "succeeded", "failed", "running", "waiting", "needs_human", "cancelled", "retrying", "succeeded"}
	for i := 1; i <= n; i++ {
		state := states[i%len(states)]
		parent := ""
		if i%5 != 1 {
			parent = fmt.Sprintf(`, "parent": "%d"`, i-(i-1)%5)
		}
		extra := ""
		switch state {
		case "running":
			extra = `, "progress": {"attempt": 1, "turns": 4, "lastTool": "Bash go test ./...", "tokens": {"input": 9000, "output": 800}, "costUsd": 0.05}`
		case "needs_human":
			extra = `, "hitl": {"reason": "Human review", "options": ["passed", "failed", "leave"]}`
		case "failed":
			extra = `, "error": "exit status 1"`
		}
		body := fmt.Sprintf(`{"id": "%d", "subject": "Task number %d of the big list", "status": "pending", "blocks": [], "blockedBy": [], "owner": "taskd",
  "metadata": {"taskd": {"state": %q, "attempt": 1, "startedAt": "2026-03-20T11:00:00Z"%s%s}}}`, i, i, state, parent, extra)
		if err := os.WriteFile(filepath.Join(list, fmt.Sprintf("%d.json", i)), []byte(body), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// heapMB is the live heap after a collection, in MB.
func heapMB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

// BenchmarkTenThousand measures taskd ui over a root of 10,000 tasks:
// reading them all (load), drawing a screen while scrolling a page at a
// time through all of them (scroll, per screen), and taking one changed
// task file (update: the file read again, the list linked, the rows made
// again, a screen drawn). Each reports the live heap it leaves (MB-heap):
// what the view holds does not grow with scrolling, and the rows are
// drawn only as far as the screen shows them.
func BenchmarkTenThousand(b *testing.B) {
	const n = 10000
	root := bigRoot(b, n)
	opt := Options{Root: root, Now: func() time.Time { return now }}
	base := heapMB()

	b.Run("load", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			r := newReader(opt)
			r.scan()
			m := newModel(opt, nil)
			m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
			m.Update(r.snapshot())
			_ = m.View()
			if i == b.N-1 {
				if got := len(m.rows); got < n {
					b.Fatalf("%d rows, want at least %d", got, n)
				}
				b.ReportMetric(heapMB()-base, "MB-heap")
				runtime.KeepAlive(m)
			}
		}
	})

	r := newReader(opt)
	r.scan()
	m := newModel(opt, nil)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(r.snapshot())
	loaded := heapMB() - base

	b.Run("scroll", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if m.cursor >= len(m.rows)-2 {
				m.moveTo(0)
			}
			m.Update(tea.KeyMsg{Type: tea.KeyPgDown})
			_ = m.View()
		}
		b.ReportMetric(heapMB()-base, "MB-heap")
		b.ReportMetric(loaded, "MB-loaded")
	})

	b.Run("update", func(b *testing.B) {
		path := filepath.Join(root, "l", "4.json")
		for i := 0; i < b.N; i++ {
			body := fmt.Sprintf(`{"id": "4", "subject": "Task number 4", "status": "in_progress", "blocks": [], "blockedBy": [], "owner": "taskd",
  "metadata": {"taskd": {"parent": "1", "state": "running", "attempt": 1, "startedAt": "2026-03-20T11:00:00Z", "progress": {"attempt": 1, "turns": %d, "costUsd": 0.01}}}}`, i)
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				b.Fatal(err)
			}
			r.changed["l"] = map[string]bool{"4": true}
			r.flush()
			m.Update(r.snapshot())
			_ = m.View()
		}
		b.ReportMetric(heapMB()-base, "MB-heap")
	})
	runtime.KeepAlive(r)
	runtime.KeepAlive(m)
}
