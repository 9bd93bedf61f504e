package job

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/waitfor"
	"github.com/taskd/taskd/taskfile"
)

// runningJob returns a job on task 1 of a new list, claimed (running).
func runningJob(t *testing.T) *Job {
	t.Helper()
	dir := t.TempDir()
	content := `{"id": "1", "subject": "s", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "true"}}}`
	if err := os.WriteFile(filepath.Join(dir, "1.json"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := taskfile.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := config.NewConfig(dir, nil, nil)
	j := &Job{Scope: Scope{Env: &Env{Config: cfg, Log: slog.New(slog.DiscardHandler)}, List: &List{ID: "l", Dir: d, Events: eventlog.New(dir)}, ID: "1"}}
	if _, err := j.Claim(t.Context(), func(_ *taskfile.Task, sp *task.Spec) error { sp.Attempt++; return nil }); err != nil {
		t.Fatal(err)
	}
	return j
}

// turnsOnFile reads metadata.taskd.progress.turns, or -1.
func turnsOnFile(t *testing.T, j *Job) int {
	tf, err := j.List.Dir.Read("1")
	if err != nil {
		t.Fatal(err)
	}
	v, ok := tf.Metadata.Object("taskd").Get("progress")
	if !ok {
		return -1
	}
	var p agent.Progress
	json.Unmarshal(taskfile.AppendJSON(nil, v), &p)
	return p.Turns
}

// TestProgressWriter_LatestAtMostEveryInterval: the first report is
// written at once; reports that follow within the interval become one
// write, of the latest; closing drops a write that is due, so nothing is
// written after it (the attempt's end comes next).
func TestProgressWriter_LatestAtMostEveryInterval(t *testing.T) {
	t.Parallel()
	j := runningJob(t)
	w := &progressWriter{j: j}
	w.Progress(agent.Progress{Turns: 1})
	waitfor.Cond(t, "the first report to be written", 10*time.Second, func() bool { return turnsOnFile(t, j) == 1 })
	for n := 2; n <= 50; n++ {
		w.Progress(agent.Progress{Turns: n})
	}
	waitfor.Cond(t, "the latest report to be written", ProgressInterval+10*time.Second, func() bool {
		got := turnsOnFile(t, j)
		if got != 1 && got != 50 {
			t.Fatalf("an intermediate report (%d) was written; want only the latest", got)
		}
		return got == 50
	})
	w.Progress(agent.Progress{Turns: 51}) // due in an interval: dropped by close
	w.close()
	w.Progress(agent.Progress{Turns: 52}) // after close: nothing
	if got := turnsOnFile(t, j); got != 50 {
		t.Errorf("after close the file says %d turns, want 50", got)
	}
}

// TestProgressWriter_OnlyWhileRunning: a file that no longer says the
// task runs is not written.
func TestProgressWriter_OnlyWhileRunning(t *testing.T) {
	t.Parallel()
	j := runningJob(t)
	if _, err := j.List.Dir.Update(t.Context(), "1", func(t *taskfile.Task) error {
		_, err := task.Move(t, task.Interrupt)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	w := &progressWriter{j: j}
	w.Progress(agent.Progress{Turns: 1})
	w.writes.Wait() // the write went as far as it would
	w.close()
	if got := turnsOnFile(t, j); got != -1 {
		t.Errorf("progress written into a task that does not run: %d turns", got)
	}
}

// TestBudget: a task's budget wins over its list's, which wins over its
// profile's.
func TestBudget(t *testing.T) {
	j := &Job{Scope: Scope{Env: &Env{Config: &config.Config{ListSettings: map[string]config.ListConfig{"l": {MaxCostUSD: 2}}}}, List: &List{ID: "l"}}}
	prof := &config.Profile{MaxTurns: 30, MaxCostUSD: 5}
	for _, tt := range []struct {
		sp   task.Spec
		want agent.Budget
	}{
		{task.Spec{}, agent.Budget{MaxTurns: 30, MaxCostUSD: 2}},
		{task.Spec{MaxTurns: 3, MaxCostUSD: 0.5}, agent.Budget{MaxTurns: 3, MaxCostUSD: 0.5}},
	} {
		if got := j.budget(tt.sp, prof); got != tt.want {
			t.Errorf("budget(%+v) = %+v, want %+v", tt.sp, got, tt.want)
		}
	}
}

// TestPauses: a limit with a reset time pauses its profile until then;
// without one, for a backoff that doubles with each limit in a row, at
// most the profile's maximum, and starts over once an attempt ends
// without a limit.
func TestPauses(t *testing.T) {
	now := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	prof := &config.Profile{Name: "claude", LimitBackoff: time.Minute, LimitBackoffMax: 3 * time.Minute}
	var p Pauses
	for i, want := range []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute, 3 * time.Minute} {
		if got := p.Hit(prof, agent.Limit{Message: "429"}, now).Sub(now); got != want {
			t.Errorf("limit %d in a row: paused for %v, want %v", i+1, got, want)
		}
	}
	p.Clear("claude")
	if got := p.Hit(prof, agent.Limit{}, now).Sub(now); got != time.Minute {
		t.Errorf("after a clean attempt: paused for %v, want a minute", got)
	}
	reset := now.Add(5 * time.Hour)
	if got := p.Hit(prof, agent.Limit{ResetsAt: reset}, now); !got.Equal(reset) {
		t.Errorf("a limit resetting at %v paused until %v", reset, got)
	}
	if lim := p.Paused("claude", now.Add(time.Hour)); lim == nil || !lim.Until.Equal(reset) || lim.Profile != "claude" {
		t.Errorf("Paused an hour later = %+v", lim)
	}
	if p.Paused("claude", reset) != nil || p.Paused("codex", now) != nil {
		t.Error("paused after the reset, or another profile paused")
	}
	if got := p.Next(now); !got.Equal(reset) {
		t.Errorf("Next = %v, want %v", got, reset)
	}
}
