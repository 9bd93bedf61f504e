package navigator_test

import (
	"testing"

	"github.com/taskd/taskd/navigator"
)

// TestClassify pins the guidance classifier: flow's substring
// rules, in flow's order, surprises included.
func TestClassify(t *testing.T) {
	tests := []struct {
		id, name string
		want     navigator.Bucket
	}{
		{"code_review", "Code Review", navigator.BucketReview},
		{"plan_review", "", navigator.BucketReview},
		{"analyze", "", navigator.BucketAnalysis},
		{"parse_requirements", "", navigator.BucketAnalysis},
		{"step", "Analyze the logs", navigator.BucketAnalysis},
		{"create_plan", "", navigator.BucketPlanning},
		{"design_refactor", "", navigator.BucketPlanning},
		{"step", "Plan it", navigator.BucketPlanning},
		{"reproduce", "", navigator.BucketInvestigation},
		{"investigate", "", navigator.BucketInvestigation},
		{"verify_fix", "Verify Fix", navigator.BucketImplement},
		{"build", "", navigator.BucketImplement},
		{"extract_core", "", navigator.BucketExtract},
		{"refactor", "", navigator.BucketRefactor},
		{"lint_format", "", navigator.BucketLint},
		{"run_tests", "", navigator.BucketTesting},
		{"VALIDATE", "", navigator.BucketTesting},
		{"update_readme", "", navigator.BucketDocumentation},
		{"commit", "", navigator.BucketCommit},
		{"create_pr", "", navigator.BucketPullRequest},
		{"improve", "", navigator.BucketPullRequest},
		{"compress", "", navigator.BucketPullRequest}, // "pr" comes first
		{"gather_context", "", navigator.BucketContext},
		{"optimize", "", navigator.BucketContext},
		{"ir_ascii", "", navigator.BucketExtract},
		{"triage", "Triage", navigator.BucketDefault},
		{"synthesize", "", navigator.BucketDefault},
	}
	for _, tt := range tests {
		if got := navigator.Classify(tt.id, tt.name); got != tt.want {
			t.Errorf("Classify(%q, %q) = %q, want %q", tt.id, tt.name, got, tt.want)
		}
	}
	seen := map[string]navigator.Bucket{}
	for _, b := range navigator.Buckets() {
		g := navigator.Guidance(b)
		if len(g) < 60 {
			t.Errorf("bucket %q: guidance %q is too short to help", b, g)
		}
		if other, dup := seen[g]; dup {
			t.Errorf("buckets %q and %q share their guidance", b, other)
		}
		seen[g] = b
	}
}
