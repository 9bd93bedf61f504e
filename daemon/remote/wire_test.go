package remote

import (
	"testing"

	"github.com/taskd/taskd/daemon/agent"
)

func TestToken(t *testing.T) {
	tests := []struct{ name, want string }{
		{"exec", "exec"},
		{"fast-claude_2", "fast-claude_2"},
		{"my.profile", "x6d792e70726f66696c65"},
		{"x1", "x7831"}, // a plain name that starts with x is encoded too: no clash with an encoded one
		{"a b", "x612062"},
	}
	for _, tt := range tests {
		if got := Token(tt.name); got != tt.want {
			t.Errorf("Token(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestOutcomeNames(t *testing.T) {
	for _, out := range []agent.Outcome{agent.Finished, agent.TimedOut, agent.Cancelled, agent.Interrupted, agent.NotStarted} {
		if got := OutcomeFrom(OutcomeName(out)); got != out {
			t.Errorf("OutcomeFrom(OutcomeName(%d)) = %d", out, got)
		}
	}
	if got := OutcomeFrom("what"); got != agent.Interrupted {
		t.Errorf("OutcomeFrom(unknown) = %d, want interrupted", got)
	}
}

func TestRunDirParts(t *testing.T) {
	tests := []struct {
		runDir string
		task   string
		n      int
		sub    string
	}{
		{"/r/l/.taskd/runs/7/3", "7", 3, ""},
		{"/r/l/.taskd/runs/a-b/12/judge", "a-b", 12, "judge"},
	}
	for _, tt := range tests {
		task, n, sub := runDirParts("/r/l", tt.runDir)
		if task != tt.task || n != tt.n || sub != tt.sub {
			t.Errorf("runDirParts(%q) = %q, %d, %q; want %q, %d, %q", tt.runDir, task, n, sub, tt.task, tt.n, tt.sub)
		}
	}
}

func TestAttemptOfSubject(t *testing.T) {
	if got := AttemptOfSubject("taskd", "taskd.run.abc.cancel"); got != "abc" {
		t.Errorf("AttemptOfSubject = %q", got)
	}
	if got := AttemptOfSubject("taskd", "other.run.abc.cancel"); got != "" {
		t.Errorf("AttemptOfSubject(other prefix) = %q", got)
	}
}
