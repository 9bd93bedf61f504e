package agent

import (
	"testing"

	"github.com/taskd/taskd/daemon/config"
)

// TestHasReport: an answer has the result object when a JSON object with a
// boolean "success" is in it; prose, and objects without it, have none.
func TestHasReport(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{`Looks good. {"success": true, "summary": "ok"}`, true},
		{`{"success": false, "summary": "the tests still fail"}`, true},
		{"I would not approve this change: the tests still fail.", false},
		{`I would not approve: "success": false`, false},
		{`{"success": "no"}`, false},
		{`{"summary": "no verdict"}`, false},
		{`{"success": true,`, false},
		{"", false},
	}
	for _, tt := range tests {
		if got := HasReport(tt.text); got != tt.want {
			t.Errorf("HasReport(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// TestWithVerdict: an answer without a verdict and the answer given when
// asked again are one attempt's result: both texts, the second's report,
// both runs' turns, time and cost.
func TestWithVerdict(t *testing.T) {
	cost := func(v float64) *float64 { return &v }
	first := Result{Success: true, Summary: "I would not approve this change.", Output: "I would not approve this change.",
		SessionID: "s1", Turns: 3, DurationMs: 1000, CostUSD: cost(0.25)}
	again := Result{Success: true, Output: `{"success": false, "summary": "the tests fail", "results": "r.txt"}`, SessionID: "s1", Turns: 1, DurationMs: 200, CostUSD: cost(0.05)}
	got := WithVerdict(first, again)
	if got.Success || got.Summary != "the tests fail" || got.Results != "r.txt" {
		t.Errorf("report: success %v summary %q results %q", got.Success, got.Summary, got.Results)
	}
	if want := "I would not approve this change.\n\n" + again.Output; got.Output != want {
		t.Errorf("output %q, want %q", got.Output, want)
	}
	if got.Turns != 4 || got.DurationMs != 1200 || got.CostUSD == nil || *got.CostUSD != 0.3 || got.SessionID != "s1" {
		t.Errorf("turns %d, duration %d, cost %v, session %q", got.Turns, got.DurationMs, got.CostUSD, got.SessionID)
	}
	if *first.CostUSD != 0.25 {
		t.Errorf("the first result's cost changed: %v", *first.CostUSD)
	}
}

// TestIsModel_CanContinue: only a program is decided by its exit status,
// and only a claude session with a plausible id is continued.
func TestIsModel_CanContinue(t *testing.T) {
	claude := &config.Profile{Name: "claude", Flags: "claude"}
	codex := &config.Profile{Name: "codex", Flags: "codex"}
	exec := &config.Profile{Name: "exec", Flags: "none"}
	if !IsModel(claude) || !IsModel(codex) || IsModel(exec) || IsModel(nil) {
		t.Errorf("IsModel: claude %v, codex %v, exec %v", IsModel(claude), IsModel(codex), IsModel(exec))
	}
	tests := []struct {
		p       *config.Profile
		session string
		want    bool
	}{
		{claude, "0b8f6a51-4c3e-4a2e-9d57-4f0d7c1e2a3b", true},
		{claude, "", false},
		{claude, "../../etc/passwd", false},
		{claude, "--dangerously-skip-permissions", false},
		{codex, "thread-1", false},
		{exec, "x", false},
	}
	for _, tt := range tests {
		if got := CanContinue(tt.p, tt.session); got != tt.want {
			t.Errorf("CanContinue(%s, %q) = %v, want %v", tt.p.Name, tt.session, got, tt.want)
		}
	}
}
