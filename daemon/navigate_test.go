package daemon_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/taskd/taskd/daemon/flow"
	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/taskfile"
)

// navCatalog is a navigator.Catalog of workflows parsed from JSON.
type navCatalog map[string]*navigator.Workflow

func (c navCatalog) Lookup(id string) (*navigator.Workflow, string, bool) {
	wf, ok := c[id]
	return wf, "", ok
}

// counter alternates between a gate that always fails into a retry and a
// step that leads back to it: every second failed advance adds one to the
// task's retryCount, which makes lost updates visible.
const counterWorkflow = `{"nodes": {
  "start": {"type": "start"},
  "gate": {"type": "gate", "name": "Gate", "agent": "Tester", "maxRetries": 1000000},
  "again": {"type": "task", "name": "Again"},
  "stuck": {"type": "end", "result": "blocked", "escalation": "hitl"},
  "done": {"type": "end", "result": "success"}},
 "edges": [{"from": "start", "to": "gate"}, {"from": "gate", "to": "again", "on": "failed"}, {"from": "gate", "to": "stuck", "on": "failed"},
  {"from": "gate", "to": "done", "on": "passed"}, {"from": "again", "to": "gate"}, {"from": "stuck", "to": "gate", "on": "passed"}]}`

func mustCatalog(t testing.TB) navCatalog {
	wf, err := navigator.Parse([]byte(counterWorkflow))
	if err != nil {
		t.Fatal(err)
	}
	return navCatalog{"counter": wf}
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestApplyWriteThrough(t *testing.T) {
	t.Parallel()
	tf, err := taskfile.Parse([]byte(`{"subject": "s", "metadata": {"currentStep": "a", "note": 1, "workflowType": "w"}, "extra": true}`), "7.json", "7")
	if err != nil {
		t.Fatal(err)
	}
	flow.ApplyWriteThrough(tf, &navigator.WriteThrough{Mode: navigator.WriteFull, ID: "7",
		Metadata: []navigator.Field{{Key: "workflowType", Value: "w2"}, {Key: "currentStep", Value: "b"}, {Key: "retryCount", Value: 2}, {Key: "autonomy", Value: true}},
		Subject:  "#7 x\n→ w2 · b (direct)", ActiveForm: "B", Description: "do b", SetDescription: true})
	want := `{
  "subject": "#7 x\n→ w2 · b (direct)",
  "metadata": {
    "currentStep": "b",
    "note": 1,
    "workflowType": "w2",
    "retryCount": 2,
    "autonomy": true
  },
  "extra": true,
  "id": "7",
  "description": "do b",
  "activeForm": "B",
  "status": "pending",
  "blocks": [],
  "blockedBy": []
}`
	if got := string(tf.Marshal()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// Metadata-only: subject, activeForm and description stay.
	tf, _ = taskfile.Parse([]byte(`{"id": "7", "subject": "s", "activeForm": "a", "description": "d", "metadata": {}}`), "7.json", "7")
	flow.ApplyWriteThrough(tf, &navigator.WriteThrough{Mode: navigator.WriteMetadata, ID: "7", Subject: "no", ActiveForm: "no",
		Metadata: []navigator.Field{{Key: "currentStep", Value: "fork"}}})
	if tf.Subject != "s" || tf.ActiveForm != "a" || tf.Description != "d" {
		t.Errorf("metadata-only write changed %+v", tf)
	}
	if v, _ := tf.Metadata.String("currentStep"); v != "fork" {
		t.Errorf("currentStep = %q", v)
	}
}

func TestNavigatorTask(t *testing.T) {
	t.Parallel()
	tf, _ := taskfile.Parse([]byte(`{"metadata": {"workflowType": "w", "retryCount": "2", "autonomy": true, "other": {"x": 1}}}`), "9.json", "9")
	nt := flow.NavigatorTask(tf, "9")
	if nt.Stem != "9" || nt.HasID || len(nt.Metadata) != 3 || nt.Metadata["workflowType"] != "w" || nt.Metadata["retryCount"] != "2" || nt.Metadata["autonomy"] != true {
		t.Errorf("NavigatorTask = %+v", nt)
	}
	if nt := flow.NavigatorTask(&taskfile.Task{ID: "9"}, "9"); nt.Metadata != nil || !nt.HasID {
		t.Errorf("without metadata: %+v", nt)
	}
}

func TestNavigateFile(t *testing.T) {
	cat := mustCatalog(t)
	ctx := context.Background()
	home := t.TempDir()
	t.Setenv("HOME", home)
	path := filepath.Join(home, "4.json")
	writeFile(t, path, `{"metadata": {"workflowType": "counter", "currentStep": "gate", "retryCount": 0}}`)

	// "~/" is the home directory; a file without an id gets its stem, with
	// flow's warning.
	resp, wt, err := flow.NavigateFile(ctx, cat, "~/4.json", navigator.Input{Result: "failed"}, flow.NavigateFileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Action != navigator.ActionRetry || wt == nil || wt.Mode != navigator.WriteFull || wt.IDWarning == "" {
		t.Fatalf("resp %+v, write-through %+v", resp, wt)
	}
	tf, err := taskfile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := tf.Metadata.Int("retryCount"); tf.ID != "4" || n != 1 || tf.Subject != "#4 \n→ counter · again (direct)" {
		t.Errorf("file after: id %q, retryCount %d, subject %q", tf.ID, n, tf.Subject)
	}

	// Current mode and error objects write nothing.
	if _, wt, err := flow.NavigateFile(ctx, cat, path, navigator.Input{}, flow.NavigateFileOptions{}); err != nil || wt != nil {
		t.Errorf("current: write-through %+v, err %v", wt, err)
	}
	_, _, err = flow.NavigateFile(ctx, cat, path, navigator.Input{Result: "passed"}, flow.NavigateFileOptions{}) // again → gate is unconditional
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	var nm *navigator.NoMatchError
	if _, _, err := flow.NavigateFile(ctx, cat, path, navigator.Input{Result: "maybe"}, flow.NavigateFileOptions{}); !errors.As(err, &nm) {
		t.Errorf("maybe at the gate: %v, want a NoMatchError", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("an error object wrote the file")
	}

	// Errors.
	if _, _, err := flow.NavigateFile(ctx, cat, filepath.Join(home, "5.json"), navigator.Input{}, flow.NavigateFileOptions{}); !errors.Is(err, navigator.ErrTaskFile) {
		t.Errorf("missing file: %v", err)
	}
	writeFile(t, filepath.Join(home, "6.json"), `{"id": "60", "metadata": {}}`)
	if _, _, err := flow.NavigateFile(ctx, cat, filepath.Join(home, "6.json"), navigator.Input{}, flow.NavigateFileOptions{}); !errors.Is(err, taskfile.ErrIDMismatch) {
		t.Errorf("id mismatch: %v", err)
	}
}

// TestNavigateFile_Concurrent advances one task from several goroutines:
// every advance must see the previous one, so no update is lost.
func TestNavigateFile_Concurrent(t *testing.T) {
	t.Parallel()
	cat := mustCatalog(t)
	path := filepath.Join(t.TempDir(), "1.json")
	writeFile(t, path, `{"id": "1", "metadata": {"workflowType": "counter", "currentStep": "gate", "retryCount": 0}}`)
	const workers, each = 4, 10
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, _, err := flow.NavigateFile(context.Background(), cat, path, navigator.Input{Result: "failed"}, flow.NavigateFileOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	tf, err := taskfile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	step, _ := tf.Metadata.String("currentStep")
	n, _ := tf.Metadata.Int("retryCount")
	if step != "gate" || n != workers*each/2 {
		t.Errorf("after %d advances: at %q with retryCount %d, want gate and %d", workers*each, step, n, workers*each/2)
	}
}

// TestNavigateFile_RecordStart checks the opt-in record of a started
// workflow, and that without it Start mode leaves the file alone.
func TestNavigateFile_RecordStart(t *testing.T) {
	t.Parallel()
	cat := mustCatalog(t)
	path := filepath.Join(t.TempDir(), "2.json")
	const raw = `{"id":"2","metadata":{"workflowType":"counter","userDescription":"Count"}}`
	writeFile(t, path, raw)
	if _, wt, err := flow.NavigateFile(context.Background(), cat, path, navigator.Input{}, flow.NavigateFileOptions{}); err != nil || wt != nil {
		t.Fatalf("start: %+v, %v", wt, err)
	}
	if data, _ := os.ReadFile(path); string(data) != raw {
		t.Errorf("start wrote the file")
	}
	resp, wt, err := flow.NavigateFile(context.Background(), cat, path, navigator.Input{}, flow.NavigateFileOptions{RecordStart: true})
	if err != nil || wt == nil || resp.Action != navigator.ActionStart {
		t.Fatalf("start with record: %+v, %+v, %v", resp, wt, err)
	}
	tf, _ := taskfile.ReadFile(path)
	if s, _ := tf.Metadata.String("currentStep"); s != "gate" || tf.Subject != "#2 Count\n→ counter · gate (Tester) · retries: 0/1000000" || tf.Description != resp.OrchestratorInstructions {
		t.Errorf("recorded: %s", tf.Marshal())
	}
	// Once started, RecordStart changes nothing: Current mode.
	if _, wt, _ := flow.NavigateFile(context.Background(), cat, path, navigator.Input{}, flow.NavigateFileOptions{RecordStart: true}); wt != nil {
		t.Errorf("current with RecordStart wrote %+v", wt)
	}
}

// BenchmarkNavigateWrite measures one advance as the daemon performs it in
// memory: navigate, apply the write-through, and encode both the new task
// file and the response. "parsed" starts from a parsed task (copied each
// time, since applying changes it); "bytes" also parses the file's bytes.
// Only the file system is left out (taskfile's BenchmarkUpdate measures
// that part).
func BenchmarkNavigateWrite(b *testing.B) {
	cat := mustCatalog(b)
	raw := []byte(`{
  "id": "1",
  "subject": "#1 Count\n→ counter · gate (Tester) · retries: 3/1000000",
  "description": "earlier prompt",
  "activeForm": "Gate (Tester)",
  "status": "in_progress",
  "owner": "taskd",
  "blocks": [],
  "blockedBy": [],
  "metadata": {
    "userDescription": "Count",
    "workflowType": "counter",
    "currentStep": "gate",
    "retryCount": 3,
    "taskd": {"state": "running", "attempt": 2}
  }
}`)
	parsed, err := taskfile.Parse(raw, "1.json", "1")
	if err != nil {
		b.Fatal(err)
	}
	in := navigator.Input{Result: "failed"}
	advance := func(b *testing.B, tf *taskfile.Task) {
		resp, wt, err := navigator.Navigate(cat, flow.NavigatorTask(tf, "1"), in)
		if err != nil {
			b.Fatal(err)
		}
		flow.ApplyWriteThrough(tf, wt)
		if len(tf.Marshal()) == 0 || len(resp.AppendJSON(nil)) == 0 {
			b.Fatal("empty output")
		}
	}
	b.Run("parsed", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			advance(b, parsed.Clone())
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "navigations/s")
	})
	b.Run("bytes", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			tf, err := taskfile.Parse(raw, "1.json", "1")
			if err != nil {
				b.Fatal(err)
			}
			advance(b, tf)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "navigations/s")
	})
}
