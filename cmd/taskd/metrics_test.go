package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestMetrics reads constructed event logs of two lists: only the logs
// matter, and mirrored copies are not counted twice.
func TestMetrics(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	writeTask(t, filepath.Join(root, "a", ".taskd", "events.jsonl"), strings.Join([]string{
		`{"ts":"2026-01-01T10:00:00Z","type":"SubagentSpawned","list":"a","task":"2","agent_type":"builder"}`,
		`{"ts":"2026-01-01T10:00:01Z","type":"SubagentSpawned","list":"a","task":"3","agent_type":"tester","bypass_allowed_by":"metadata.taskd.allowBypass of task 1"}`,
		`{"ts":"2026-01-01T10:00:01Z","type":"SubagentError","list":"a","task":"4","agent_type":"tester","error_kind":"permission"}`,
		`{"ts":"2026-01-01T10:10:00Z","type":"TranscriptEvent","list":"a","task":"2","agent_type":"builder","event_type":"subagent_stop","outcome":"success","duration_ms":4000}`,
		`{"ts":"2026-01-01T10:10:00Z","type":"TranscriptEvent","list":"a","task":"1","agent_type":"builder","event_type":"subagent_stop","outcome":"success","duration_ms":4000,"mirror_of":"2"}`,
		`{"ts":"2026-01-01T10:20:00Z","type":"SubagentTimeout","list":"a","task":"3","agent_type":"tester","source":"handoff"}`,
		`{"ts":"2026-01-01T10:20:01Z","type":"TranscriptEvent","list":"a","task":"3","agent_type":"tester","event_type":"subagent_retry"}`,
		`{"ts":"2026-01-01T10:30:00Z","type":"TranscriptEvent","list":"a","task":"3","agent_type":"tester","event_type":"subagent_stop","outcome":"failure","duration_ms":2000}`,
		`{"ts":"2026-01-01T10:30:01Z","type":"HandoffInitiated","list":"a","task":"1"}`,
		`{"ts":"2026-01-01T10:30:02Z","type":"HandoffResolved","list":"a","task":"1","action":"escalate"}`,
	}, "\n")+"\n")
	writeTask(t, filepath.Join(root, "b", ".taskd", "events.jsonl"), strings.Join([]string{
		`{"ts":"2026-01-01T10:59:56Z","type":"ConvergenceInitiated","list":"b","task":"1"}`,
		`{"ts":"2026-01-01T10:59:57Z","type":"ManualReviewRequired","list":"b","task":"1"}`,
		`{"ts":"2026-01-01T10:59:58Z","type":"ConvergenceComplete","list":"b","task":"1","conflict_count":2,"resolution_count":2}`,
		`{"ts":"2026-01-01T10:59:59Z","type":"ConvergenceInitiated","list":"b","task":"5"}`,
		`{"ts":"2026-01-01T11:00:00Z","type":"ConvergenceComplete","list":"b","task":"5","conflict_count":0,"resolution_count":0}`,
	}, "\n")+"\n")

	out, errOut, code := runCLI(t, "metrics", "--root", root, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	m := readJSON(t, out)
	for path, want := range map[string]any{
		"spawned": 2.0, "refused": 1.0, "bypassGrants": 1.0, "ended": 2.0, "succeeded": 1.0, "failed": 1.0, "successRate": 0.5,
		"retries": 1.0, "spawnsPerHour": 2.0,
		"timeouts/handoff":             1.0,
		"byType/builder/avgDurationMs": 4000.0, "byType/tester/successRate": 0.0, "byType/tester/ended": 1.0,
		"handoffs/initiated": 1.0, "handoffs/resolved": 0.0, "handoffs/running": 1.0, "handoffs/escalated": 1.0,
		"convergences/completed": 2.0, "convergences/withConflicts": 1.0,
		"convergences/conflictRate": 0.5, "convergences/manualReviews": 1.0, "convergences/conflicts": 2.0,
	} {
		if got := field(m, strings.Split(path, "/")...); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}

	out, _, _ = runCLI(t, "metrics", "--root", root)
	for _, want := range []string{
		"subagents   2 spawned (2.0/h), 1 refused by permission scope, 1 bypassPermissions grants",
		"ended       2: 1 succeeded, 1 failed, 0 timed out, 0 cancelled; success rate 50%; 0 running",
		"  builder    1 spawned, 1 ended, success 100%, average 4.0s",
		"converge    2 initiated, 2 completed, 1 with conflicts (conflict rate 50%)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}

	out, _, _ = runCLI(t, "metrics", "--root", root, "--list", "b", "--json")
	var only map[string]any
	json.Unmarshal([]byte(out), &only)
	if only["spawned"] != 0.0 || field(only, "convergences", "completed") != 2.0 {
		t.Errorf("--list b: %s", out)
	}
	// Retried subagents count once, ended with their last attempt; one
	// retried and not ended since is running.
	writeTask(t, filepath.Join(root, "c", ".taskd", "events.jsonl"), strings.Join([]string{
		`{"ts":"2026-01-01T12:00:00Z","type":"SubagentSpawned","list":"c","task":"2","agent_type":"builder"}`,
		`{"ts":"2026-01-01T12:00:00Z","type":"SubagentSpawned","list":"c","task":"3","agent_type":"builder"}`,
		`{"ts":"2026-01-01T12:00:01Z","type":"TranscriptEvent","list":"c","task":"2","agent_type":"builder","event_type":"subagent_stop","outcome":"failure","duration_ms":1000}`,
		`{"ts":"2026-01-01T12:00:02Z","type":"TranscriptEvent","list":"c","task":"2","agent_type":"builder","event_type":"subagent_retry"}`,
		`{"ts":"2026-01-01T12:00:03Z","type":"TranscriptEvent","list":"c","task":"2","agent_type":"builder","event_type":"subagent_stop","outcome":"success","duration_ms":3000}`,
		`{"ts":"2026-01-01T12:00:01Z","type":"TranscriptEvent","list":"c","task":"3","agent_type":"builder","event_type":"subagent_stop","outcome":"failure","duration_ms":1000}`,
		`{"ts":"2026-01-01T12:00:02Z","type":"TranscriptEvent","list":"c","task":"3","agent_type":"builder","event_type":"subagent_retry"}`,
		`{"ts":"2026-01-01T12:00:02Z","type":"SubagentError","list":"c","task":"4","agent_type":"builder","error_kind":"permission"}`,
		`{"ts":"2026-01-01T12:00:02Z","type":"TranscriptEvent","list":"c","task":"4","agent_type":"builder","event_type":"subagent_stop","outcome":"failure"}`,
	}, "\n")+"\n")
	out, _, _ = runCLI(t, "metrics", "--root", root, "--list", "c", "--json")
	c := readJSON(t, out)
	for path, want := range map[string]any{
		"spawned": 2.0, "ended": 1.0, "running": 1.0, "retries": 2.0, "refused": 1.0, "succeeded": 1.0, "failed": 0.0,
		"byType/builder/ended": 1.0, "byType/builder/running": 1.0, "byType/builder/avgDurationMs": 4000.0,
	} {
		if got := field(c, strings.Split(path, "/")...); got != want {
			t.Errorf("list c: %s = %v, want %v", path, got, want)
		}
	}
	// Handoffs add up: each counts once, an escalated one runs until a
	// person's answer resolves it; a resolution whose start the logs do
	// not hold is not counted. A subagent its handoff's timeout cancelled
	// timed out.
	writeTask(t, filepath.Join(root, "d", ".taskd", "events.jsonl"), strings.Join([]string{
		`{"ts":"2026-01-01T13:00:00Z","type":"HandoffInitiated","list":"d","task":"1","subagent_id":"2"}`,
		`{"ts":"2026-01-01T13:00:01Z","type":"HandoffResolved","list":"d","task":"1","subagent_id":"2","action":"escalate"}`,
		`{"ts":"2026-01-01T13:00:02Z","type":"HandoffResolved","list":"d","task":"1","subagent_id":"2","action":"continue"}`,
		`{"ts":"2026-01-01T13:00:03Z","type":"HandoffInitiated","list":"d","task":"1","subagent_id":"3"}`,
		`{"ts":"2026-01-01T13:00:04Z","type":"HandoffResolved","list":"d","task":"1","subagent_id":"3","action":"abort"}`,
		`{"ts":"2026-01-01T13:00:05Z","type":"HandoffInitiated","list":"d","task":"1","subagent_id":"4"}`,
		`{"ts":"2026-01-01T13:00:06Z","type":"HandoffResolved","list":"d","task":"1","subagent_id":"9","action":"none"}`,
		`{"ts":"2026-01-01T13:00:07Z","type":"HandoffInitiated","list":"d","task":"1","subagent_id":"2"}`,
		`{"ts":"2026-01-01T13:00:00Z","type":"SubagentSpawned","list":"d","task":"5","agent_type":"builder"}`,
		`{"ts":"2026-01-01T13:00:08Z","type":"SubagentTimeout","list":"d","task":"5","agent_type":"builder","source":"handoff"}`,
		`{"ts":"2026-01-01T13:00:09Z","type":"TranscriptEvent","list":"d","task":"5","agent_type":"builder","event_type":"subagent_stop","outcome":"timeout"}`,
	}, "\n")+"\n")
	out, _, _ = runCLI(t, "metrics", "--root", root, "--list", "d", "--json")
	d := readJSON(t, out)
	for path, want := range map[string]any{
		"handoffs/initiated": 4.0, "handoffs/resolved": 2.0, "handoffs/running": 2.0, "handoffs/escalated": 1.0,
		"handoffs/byAction/continue": 1.0, "handoffs/byAction/abort": 1.0, "handoffs/byAction/none": nil,
		"timedOut": 1.0, "cancelled": 0.0, "timeouts/handoff": 1.0,
	} {
		if got := field(d, strings.Split(path, "/")...); got != want {
			t.Errorf("list d: %s = %v, want %v", path, got, want)
		}
	}
	out, _, _ = runCLI(t, "metrics", "--root", root, "--list", "d")
	if want := "handoffs    4 initiated, 2 resolved (abort 1, continue 1), 2 running; 1 escalated to a person"; !strings.Contains(out, want) {
		t.Errorf("text output lacks %q:\n%s", want, out)
	}
	if out, _, _ := runCLI(t, "metrics", "--root", t.TempDir()); out != "no subagent events\n" {
		t.Errorf("empty root: %q", out)
	}
}
