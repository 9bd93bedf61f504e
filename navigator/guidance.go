package navigator

import "strings"

// A step without "instructions" gets a baseline paragraph chosen by what
// its id and name say about it. The buckets and the order in which they are
// tested are flow's, so a step lands in the same bucket in both;
// the paragraphs are taskd's own.

// Bucket names a kind of step for the baseline guidance.
type Bucket string

// Guidance buckets, in the order the classifier tests them.
const (
	BucketReview        Bucket = "review"
	BucketAnalysis      Bucket = "analysis"
	BucketPlanning      Bucket = "planning"
	BucketInvestigation Bucket = "investigation"
	BucketImplement     Bucket = "implementation"
	BucketRefactor      Bucket = "refactor"
	BucketLint          Bucket = "lint"
	BucketTesting       Bucket = "testing"
	BucketDocumentation Bucket = "documentation"
	BucketCommit        Bucket = "commit"
	BucketPullRequest   Bucket = "pull request"
	BucketContext       Bucket = "context"
	BucketExtract       Bucket = "extract"
	BucketDefault       Bucket = "default"
)

// guidance holds taskd's paragraph for each bucket.
var guidance = map[Bucket]string{
	BucketReview: "Review the work as a careful second reader: read the change and the code around it, " +
		"check correctness, error handling, tests and naming against the project's conventions, and list " +
		"concrete findings with file and line. Pass only when nothing blocking remains; otherwise fail and " +
		"say exactly what must change.",
	BucketAnalysis: "Analyse before changing anything: read the request and the code it touches, state the " +
		"requirements and acceptance criteria, note constraints and open questions, and summarise what has " +
		"to change and where. Do not modify files in this step.",
	BucketPlanning: "Write a plan the following steps can carry out: the files to touch, the order of the " +
		"changes, how each one will be tested, and the risks. Prefer small steps that can be reviewed on " +
		"their own; leave the code unchanged.",
	BucketInvestigation: "Investigate: reproduce the behaviour or collect the evidence, record the exact " +
		"commands, inputs and observations, and narrow down where the cause lies. Keep facts and hypotheses " +
		"apart in your report.",
	BucketImplement: "Make the change: the smallest edits that meet the requirements, in the style of the " +
		"surrounding code, with tests added or updated alongside and the build kept green. Summarise what " +
		"changed and why.",
	BucketRefactor: "Restructure without changing behaviour: work in small steps, keep every existing test " +
		"passing after each one, and call out anything whose behaviour might have shifted.",
	BucketLint: "Run the project's formatters and linters, fix what they report (automatically where the " +
		"tools can), and pass only when they run clean.",
	BucketTesting: "Test the work: write the tests the step asks for, run the relevant suites, check the " +
		"acceptance criteria, and report the exact commands and their results. Fail with the failing output " +
		"if anything does not pass.",
	BucketDocumentation: "Bring the documentation in line with the change (README, reference pages, " +
		"comments, examples): accurate, brief, and with examples that work.",
	BucketCommit: "Commit the finished work: stage only the intended files, read the staged diff once more, " +
		"and write a message that says what changed and why.",
	BucketPullRequest: "Open a pull request: push the branch and write a title and description that explain " +
		"the change, how it was tested, and where reviewers should look closely.",
	BucketContext: "Improve the context agents work from: find what is missing, redundant or misleading in " +
		"prompts, instructions and loaded files, and tighten it so the next run needs less guessing.",
	BucketExtract: "Extract the requested information into the structure the step describes, completely and " +
		"faithfully; mark anything uncertain instead of guessing.",
	BucketDefault: "Carry out this step as described and stay within its scope. When done, report what you " +
		"did and whether it succeeded, so the workflow can move on.",
}

// Guidance returns taskd's baseline paragraph for a bucket.
func Guidance(b Bucket) string { return guidance[b] }

// Buckets returns every bucket in classifier order.
func Buckets() []Bucket {
	return []Bucket{BucketReview, BucketAnalysis, BucketPlanning, BucketInvestigation, BucketImplement,
		BucketRefactor, BucketLint, BucketTesting, BucketDocumentation, BucketCommit, BucketPullRequest,
		BucketContext, BucketExtract, BucketDefault}
}

// Classify picks the guidance bucket for a step from its id and name, with
// flow's substring rules in flow's order (so "verify_fix" is an
// implementation step and any id containing "pr" a pull request).
func Classify(id, name string) Bucket {
	id, name = strings.ToLower(id), strings.ToLower(name)
	has := func(s string, subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(s, sub) {
				return true
			}
		}
		return false
	}
	switch {
	case has(id, "review"):
		return BucketReview
	case has(id, "analyze", "analysis", "parse", "requirements") || has(name, "analyze"):
		return BucketAnalysis
	case has(id, "plan", "design") || has(name, "plan"):
		return BucketPlanning
	case has(id, "investigate", "reproduce"):
		return BucketInvestigation
	case has(id, "implement", "build", "develop", "fix"):
		return BucketImplement
	case has(id, "refactor"):
		return BucketRefactor
	case has(id, "lint", "format"):
		return BucketLint
	case has(id, "test", "verify", "validate"):
		return BucketTesting
	case has(id, "document", "readme"):
		return BucketDocumentation
	case has(id, "commit"):
		return BucketCommit
	case has(id, "pr", "pull_request", "pull-request"):
		return BucketPullRequest
	case has(id, "context", "optimize", "compress"):
		return BucketContext
	case has(id, "extract", "ir_"):
		return BucketExtract
	}
	return BucketDefault
}
