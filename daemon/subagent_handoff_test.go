package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestHandoff_Monitor: a /handoff line in monitor mode records the link
// and lets the parent go on; the child's events are mirrored into the
// parent's stream, and its end completes and resolves the handoff.
func TestHandoff_Monitor(t *testing.T) {
	t.Parallel()
	h := startSubagents(t, []string{"l"})
	cwd := t.TempDir()
	child := "sleep 0.5; touch built; " + resultJSON(`"summary": "built"`)
	prompt := "/delegate " + q(child) + " --agent-type builder\n/handoff builder-1\n\n" +
		`[ -n "$TASKD_RESULTS" ] && exit 0; test -f built && exit 7; echo parent`
	h.drop("l", "1", parentTask(prompt, cwd, map[string]any{"permissionMode": "acceptEdits"}))
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	id := h.childNamed("l", "1", "builder-1")
	evs := h.waitEvents("l", eventlog.HandoffResolved, "1", 1)
	checkSequence(t, evs, []wantEvent{
		{eventlog.HandoffInitiated, "1", map[string]any{"subagent_id": id, "handoff_mode": "monitor", "parent_session_id": "1", "agent_type": "builder", "line": 2}},
		{eventlog.TranscriptEvent, "1", map[string]any{"mirror_of": id, "event_type": eventlog.TaskSucceeded, "subagent_id": id, "handoff_mode": "monitor"}},
		{eventlog.HandoffComplete, "1", map[string]any{"subagent_id": id, "outcome": "success", "handoff_mode": "monitor", "artifacts": nil}},
		{eventlog.HandoffResolved, "1", map[string]any{"subagent_id": id, "outcome": "success", "action": "none", "artifacts": nil}},
	})
	recs := h.read("l", "1").Metadata.Object("taskd")
	if got := string(mustJSON(get(recs, "handoffs"))); !strings.Contains(got, `"state":"resolved"`) || !strings.Contains(got, `"mode":"monitor"`) {
		t.Errorf("handoffs = %s", got)
	}
}

// TestHandoff_MonitorMirrorsCommandEvents: an event a taskd command logs
// for a monitored child (here a message sent to it, by itself) is
// mirrored into the parent's stream like the daemon's own events.
func TestHandoff_MonitorMirrorsCommandEvents(t *testing.T) {
	t.Parallel()
	h := startSubagents(t, []string{"l"})
	cwd := t.TempDir()
	child := `sleep 0.3; taskd send "$TASKD_TASK_ID" note-to-self || exit 3; ` + resultJSON(`"summary": "noted"`)
	prompt := "/delegate " + q(child) + " --agent-type builder\n/handoff builder-1\n\n" +
		`[ -n "$TASKD_RESULTS" ] && exit 0; echo parent`
	h.drop("l", "1", parentTask(prompt, cwd, map[string]any{"permissionMode": "acceptEdits"}))
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	id := h.childNamed("l", "1", "builder-1")
	evs := h.waitEvents("l", eventlog.HandoffResolved, "1", 1)
	checkSequence(t, evs, []wantEvent{
		{eventlog.HandoffInitiated, "1", map[string]any{"subagent_id": id, "handoff_mode": "monitor"}},
		{eventlog.MessageSent, id, map[string]any{"from": id}},
		{eventlog.TranscriptEvent, "1", map[string]any{"mirror_of": id, "event_type": eventlog.MessageSent, "subagent_id": id, "handoff_mode": "monitor"}},
		{eventlog.TranscriptEvent, "1", map[string]any{"mirror_of": id, "event_type": eventlog.TaskSucceeded, "subagent_id": id}},
		{eventlog.HandoffResolved, "1", map[string]any{"subagent_id": id, "outcome": "success", "action": "none"}},
	})
}

// TestHandoff_Command: taskd handoff --transfer-control waits for the
// child and prints its result; a later monitor-mode handoff to the child,
// which has ended by then, is complete and resolved at once.
func TestHandoff_Command(t *testing.T) {
	t.Parallel()
	h := startSubagents(t, []string{"l"})
	cwd := t.TempDir()
	script := `[ -n "$TASKD_RESULTS" ] && exit 0
taskd delegate "sleep 0.3; echo '{\"success\": true, \"summary\": \"done it\"}'" --agent-type builder > child.id
taskd handoff builder-1 --transfer-control > waited.txt || exit 4
taskd handoff --json builder-1 > monitor.json || exit 5`
	h.drop("l", "1", parentTask(script, cwd, map[string]any{"permissionMode": "acceptEdits"}))
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	id := strings.TrimSpace(readFile(t, filepath.Join(cwd, "child.id")))
	if got := readFile(t, filepath.Join(cwd, "waited.txt")); !strings.Contains(got, "(builder-1): succeeded  done it") {
		t.Errorf("taskd handoff --transfer-control printed:\n%s", got)
	}
	if got := readFile(t, filepath.Join(cwd, "monitor.json")); !strings.Contains(got, `"mode": "monitor"`) {
		t.Errorf("taskd handoff --json printed:\n%s", got)
	}
	evs := h.waitEvents("l", eventlog.HandoffResolved, "1", 2)
	checkSequence(t, evs, []wantEvent{
		{eventlog.HandoffInitiated, "1", map[string]any{"subagent_id": id, "handoff_mode": "transfer-control"}},
		{eventlog.HandoffComplete, "1", map[string]any{"subagent_id": id, "handoff_mode": "transfer-control", "outcome": "success"}},
		{eventlog.HandoffResolved, "1", map[string]any{"subagent_id": id, "handoff_mode": "transfer-control", "action": "none"}},
		{eventlog.HandoffInitiated, "1", map[string]any{"subagent_id": id, "handoff_mode": "monitor"}},
		{eventlog.HandoffComplete, "1", map[string]any{"subagent_id": id, "handoff_mode": "monitor", "outcome": "success"}},
		{eventlog.HandoffResolved, "1", map[string]any{"subagent_id": id, "handoff_mode": "monitor", "action": "none"}},
	})
	if n := countEvents(evs, eventlog.HandoffComplete, "1"); n != 2 {
		t.Errorf("%d HandoffComplete events, want 2", n)
	}
}

// TestHandoff_TransferControl: a /handoff --transfer-control line keeps
// the parent's agent from starting until the child has ended, then gives
// it the child's result.
func TestHandoff_TransferControl(t *testing.T) {
	t.Parallel()
	h := startSubagents(t, []string{"l"})
	cwd := t.TempDir()
	child := "sleep 0.3; touch built; " + resultJSON(`"summary": "built the feature"`)
	prompt := "/delegate " + q(child) + " --agent-type builder\n/handoff builder-1 --transfer-control\n\n" +
		"test -f built || exit 7\n" + `printf '%s' "$TASKD_RESULTS" > results.txt`
	h.drop("l", "1", parentTask(prompt, cwd, map[string]any{"permissionMode": "acceptEdits"}))
	parent := h.waitState("l", "1", task.Succeeded, 30*time.Second)
	id := h.childNamed("l", "1", "builder-1")
	results, _ := os.ReadFile(filepath.Join(cwd, "results.txt"))
	if !strings.Contains(string(results), "Result of the subagent you handed off to: builder-1 (task "+id+"), succeeded") ||
		!strings.Contains(string(results), "built the feature") {
		t.Errorf("the parent's agent got:\n%s", results)
	}
	if done := stringsOf(parent.Metadata.Object("taskd").Object("children"), "done"); len(done) != 1 || done[0] != id {
		t.Errorf("done children = %v, want [%s]", done, id)
	}
	evs := h.waitEvents("l", eventlog.TaskSucceeded, "1", 1) // logged just after the file shows it
	checkSequence(t, evs, []wantEvent{
		{eventlog.HandoffInitiated, "1", map[string]any{"subagent_id": id, "handoff_mode": "transfer-control", "on_failure": "escalate"}},
		{eventlog.TaskWaiting, "1", map[string]any{"reason": "handoff", "children": []any{id}}},
		{eventlog.TaskSucceeded, id, nil},
		{eventlog.HandoffComplete, "1", map[string]any{"subagent_id": id, "outcome": "success"}},
		{eventlog.TaskResumed, "1", map[string]any{"reason": "handoff"}},
		{eventlog.HandoffResolved, "1", map[string]any{"subagent_id": id, "outcome": "success", "action": "none"}},
		{eventlog.TaskSucceeded, "1", nil},
	})
	if n := countEvents(evs, eventlog.TaskStarted, "1"); n != 2 {
		t.Errorf("parent started %d times, want 2 (suspended, then run)", n)
	}
	if a, _ := parent.Metadata.Object("taskd").Int("attempt"); a != 1 {
		t.Errorf("parent attempt = %d, want 1: the pass that waited ran no agent", a)
	}
}

// TestHandoff_Timeout hands off with transfer-control to a child that
// hangs, with a timeout of 2s, as a prompt line and as taskd handoff, for
// each --on-failure. The child is cancelled at the timeout (its process is
// gone); retry runs it again (here the second run succeeds, or every run
// hangs and retries run out), abort fails the parent, escalate asks a
// person, who answers by editing the file.
func TestHandoff_Timeout(t *testing.T) {
	t.Parallel()
	// The child hangs on its first attempt; with "always" on every one.
	hang := func(always bool) string {
		s := `echo $$ >> child.pids; `
		if !always {
			s += `if [ "$TASKD_ATTEMPT" -gt 1 ]; then ` + resultJSON(`"summary": "second run"`) + `; exit 0; fi; `
		}
		return s + "exec sleep 30"
	}
	tests := []struct {
		name, source, onFailure string
		always                  bool
		wantState               task.State // the parent's state before any answer
		wantAction              string     // HandoffResolved's action
		wantRetries             int
		answer                  string // a person's answer, for needs_human
	}{
		{"line retry", "line", "retry", false, task.Succeeded, "none", 1, ""},
		{"line retries run out", "line", "retry", true, task.NeedsHuman, "escalate", 2, "abort"},
		{"line abort", "line", "abort", true, task.Failed, "abort", 0, ""},
		{"line escalate", "line", "escalate", true, task.NeedsHuman, "escalate", 0, "continue"},
		{"command retry", "command", "retry", false, task.Succeeded, "none", 1, ""},
		{"command abort", "command", "abort", true, task.Failed, "abort", 0, ""},
		{"command escalate", "command", "escalate", true, task.NeedsHuman, "escalate", 0, "continue"},
	}
	h := startSubagents(t, []string{"l"})
	cwds := map[string]string{}
	for i, tt := range tests {
		cwd := t.TempDir()
		cwds[tt.name] = cwd
		delegate := "/delegate " + q(hang(tt.always)) + " --agent-type builder\n"
		flags := " --transfer-control --timeout 2 --on-failure " + tt.onFailure
		var prompt string
		if tt.source == "line" {
			prompt = delegate + "/handoff builder-1" + flags + "\n\ntouch agent-ran"
		} else {
			prompt = delegate + "\ntouch agent-ran; taskd handoff builder-1" + flags + " > out.txt 2> err.txt; echo $? > rc; exit 0"
		}
		h.drop("l", "p"+string(rune('a'+i)), parentTask(prompt, cwd, map[string]any{"permissionMode": "acceptEdits"}))
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := h.in(t)
			pid, cwd := "p"+string(rune('a'+i)), cwds[tt.name]
			p := h.waitState("l", pid, tt.wantState, 60*time.Second)
			id := h.childNamed("l", pid, "builder-1")
			evs := h.waitEvents("l", eventlog.HandoffResolved, pid, 1)
			want := []wantEvent{
				{eventlog.HandoffInitiated, pid, map[string]any{"subagent_id": id, "handoff_mode": "transfer-control", "on_failure": tt.onFailure, "timeout": "2s"}},
				{eventlog.SubagentTimeout, id, map[string]any{"source": "handoff", "timeout": "2s", "subagent_id": id, "agent_type": "builder"}},
				{eventlog.TaskCancelled, id, nil},
			}
			for r := 1; r <= tt.wantRetries; r++ {
				want = append(want, wantEvent{eventlog.TranscriptEvent, id, map[string]any{"event_type": "subagent_retry", "retry": r}})
			}
			want = append(want, wantEvent{eventlog.HandoffResolved, pid, map[string]any{"subagent_id": id, "action": tt.wantAction, "retries": tt.wantRetries}})
			checkSequence(t, evs, want)
			if n := countEvents(evs, eventlog.SubagentTimeout, id); n != 1+tt.wantRetries-boolInt(!tt.always && tt.wantRetries > 0) {
				t.Errorf("%d SubagentTimeout events", n)
			}
			for _, line := range strings.Fields(readFile(t, filepath.Join(cwd, "child.pids"))) {
				var pidN int
				if _, err := fmt.Sscan(line, &pidN); err == nil && alive(pidN) {
					t.Errorf("the timed-out child's process %d is still alive", pidN)
				}
			}
			_, ranErr := os.Stat(filepath.Join(cwd, "agent-ran"))
			if tt.source == "line" && tt.wantState != task.Succeeded && ranErr == nil {
				t.Errorf("the parent's agent ran although the handoff failed")
			}
			if tt.source == "command" {
				wantRC := "1"
				if tt.wantState == task.Succeeded {
					wantRC = "0"
				}
				if rc := strings.TrimSpace(readFile(t, filepath.Join(cwd, "rc"))); rc != wantRC {
					t.Errorf("taskd handoff exit status %s, want %s; stderr: %s", rc, wantRC, readFile(t, filepath.Join(cwd, "err.txt")))
				}
			}
			switch tt.wantState {
			case task.Succeeded:
				if tt.source == "command" && !strings.Contains(readFile(t, filepath.Join(cwd, "out.txt")), "second run") {
					t.Errorf("taskd handoff printed:\n%s", readFile(t, filepath.Join(cwd, "out.txt")))
				}
			case task.Failed:
				if e := tdString(p, "error"); !strings.Contains(e, "--on-failure abort") || !strings.Contains(e, "timeout") {
					t.Errorf("parent error = %q", e)
				}
			case task.NeedsHuman:
				hitl := p.Metadata.Object("taskd").Object("hitl")
				if k, _ := hitl.String("kind"); k != "handoff" || !equalJSON(get(hitl, "options"), []string{"retry", "continue", "abort", "leave"}) {
					t.Errorf("hitl = %s", mustJSON(hitl))
				}
				if s, _ := hitl.String("source"); s != tt.source {
					t.Errorf("hitl source = %q, want %q", s, tt.source)
				}
				answer(t, h, pid, tt.answer)
				switch tt.answer {
				case "continue":
					h.waitState("l", pid, task.Succeeded, 30*time.Second)
					if _, err := os.Stat(filepath.Join(cwd, "agent-ran")); err != nil {
						t.Errorf("the parent's agent did not run after continue")
					}
				case "abort":
					if e := tdString(h.waitState("l", pid, task.Failed, 30*time.Second), "error"); !strings.Contains(e, "aborted by a person") {
						t.Errorf("error after abort = %q", e)
					}
				}
				h.waitEvents("l", eventlog.HumanResolved, pid, 1)
			}
		})
	}
	var timeouts, retries int
	for _, tt := range tests {
		timeouts += 1 + tt.wantRetries - boolInt(!tt.always && tt.wantRetries > 0)
		retries += tt.wantRetries
	}
	m := metricsOf(t, h)
	if m.Timeouts["handoff"] != timeouts || m.Retries != retries || m.Handoffs.Initiated != len(tests) {
		t.Errorf("metrics: %d handoff timeouts, %d retries, handoffs %+v; want %d, %d, %d initiated",
			m.Timeouts["handoff"], m.Retries, m.Handoffs, timeouts, retries, len(tests))
	}
	// Every handoff is resolved, once (those escalated by the person's
	// answer); every child that did not succeed on a retry ended because
	// its handoff's time ran out: timed out, not cancelled.
	if h := m.Handoffs; h.Initiated != h.Resolved+h.Running || h.Running != 0 || h.Escalated != 3 || h.ByAction["abort"] != 3 || h.ByAction["continue"] != 2 || h.ByAction["none"] != 2 {
		t.Errorf("handoffs do not add up: %+v; want 7 resolved: 2 none, 3 abort (one a person's answer), 2 continue; 3 escalated", h)
	}
	if m.TimedOut+m.Succeeded != m.Ended || m.Succeeded != 2 || m.Cancelled != 0 {
		t.Errorf("subagents: %d ended, %d succeeded, %d timed out, %d cancelled; want 2 succeeded on a retry, the others timed out", m.Ended, m.Succeeded, m.TimedOut, m.Cancelled)
	}
}

// answer sets metadata.taskd.resolve of task id by editing its file, as a
// person does.
func answer(t *testing.T, h *harness, id, answer string) {
	t.Helper()
	dir, err := taskfile.Open(h.listDir("l"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = dir.Update(context.Background(), id, func(tf *taskfile.Task) error {
		tf.EnsureMetadata().EnsureObject("taskd").Set("resolve", answer)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return string(data)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func get(o *taskfile.Object, key string) any {
	v, _ := o.Get(key)
	return v
}
