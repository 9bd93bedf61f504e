package subagent

import (
	"testing"

	"github.com/taskd/taskd/daemon/prompt"
)

// TestVotedOn: a /delegate line's child is marked as voted on when a
// /converge line of the same script names it and compares answers (vote,
// consensus); merge and first_success do not, nor a line naming others.
func TestVotedOn(t *testing.T) {
	tests := []struct {
		script, name string
		want         bool
	}{
		{"/delegate \"a\" --agent-type analyzer\n/converge analyzer-1 analyzer-2 analyzer-3 --strategy vote\n\ngo", "analyzer-2", true},
		{"/delegate \"a\" --agent-type analyzer\n/converge analyzer-1 analyzer-2 --strategy consensus\n\ngo", "analyzer-1", true},
		{"/delegate \"a\" --agent-type analyzer\n/converge analyzer-1 analyzer-2 --strategy merge\n\ngo", "analyzer-1", false},
		{"/delegate \"a\" --agent-type analyzer\n/converge analyzer-1 analyzer-2 --strategy first_success\n\ngo", "analyzer-1", false},
		{"/delegate \"a\" --agent-type analyzer\n/converge analyzer-1 analyzer-2 analyzer-3 --strategy vote\n\ngo", "builder-1", false},
		{"/delegate \"a\" --agent-type analyzer\n\ngo", "analyzer-1", false},
	}
	for _, tt := range tests {
		s, err := prompt.Parse(tt.script, prompt.ParseOptions{})
		if err != nil {
			t.Fatalf("%q: %v", tt.script, err)
		}
		if got := votedOn(s, tt.name); got != tt.want {
			t.Errorf("votedOn(%q, %s) = %v, want %v", tt.script, tt.name, got, tt.want)
		}
	}
}
