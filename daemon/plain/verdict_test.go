package plain

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/chain"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/prompt"
)

var jsonObject = regexp.MustCompile(`\{[^{}]*\}`)

// TestVoteFormat: the answer format a voted-on task is told, and the line
// it is asked for again, are result objects whose answer the vote reads;
// an answer without one is no verdict, one that says it failed is.
func TestVoteFormat(t *testing.T) {
	for name, text := range map[string]string{"format": VoteFormat, "asked again": AskVoteAgain} {
		examples := jsonObject.FindAllString(text, -1)
		if len(examples) == 0 {
			t.Errorf("%s: no example", name)
		}
		for _, ex := range examples {
			var m map[string]any
			if err := json.Unmarshal([]byte(ex), &m); err != nil {
				t.Errorf("%s: the example %s is not JSON: %v", name, ex, err)
			}
			res := agent.Result{Output: ex}
			res.Success, _ = m["success"].(bool)
			res.Answer, _ = m["answer"].(string)
			if !voteVerdict.Has(res) {
				t.Errorf("%s: the example %s is no verdict", name, ex)
			}
		}
	}
	tests := []struct {
		res  agent.Result
		want bool
	}{
		{agent.Result{Success: true, Output: "LRU is the best fit here."}, false},
		{agent.Result{Success: true, Output: `{"success": true, "summary": "compared them"}`}, false},
		{agent.Result{Success: true, Answer: "lru", Output: `{"success": true, "summary": "s", "answer": "lru"}`}, true},
		{agent.Result{Success: false, Output: `{"success": false, "summary": "could not tell"}`}, true},
	}
	for _, tt := range tests {
		if got := voteVerdict.Has(tt.res); got != tt.want {
			t.Errorf("Has(%q) = %v, want %v", tt.res.Output, got, tt.want)
		}
	}
}

// TestQuestions: a person asked for a missing verdict is shown the
// agent's answer and offered what fits the gate.
func TestQuestions(t *testing.T) {
	asked := job.Asked{Again: true, Said: "LRU is the best fit here.\n\nAs I said: LRU."}
	q := voteQuestion(asked)
	if q.Gate != "vote" || !slices.Equal(q.Options, []string{"abstain", "retry", "fail", "leave"}) || q.Said != asked.Said {
		t.Errorf("vote question %+v", q)
	}
	if !strings.Contains(q.Reason, `"LRU is the best fit here. As I said: LRU."`) || !strings.Contains(q.Reason, "none when asked again") {
		t.Errorf("vote reason %q", q.Reason)
	}
	u := &chain.Unjudged{Iteration: 3, Asked: job.Asked{Said: "Looks done to me."}}
	q = untilQuestion(u, &prompt.Loop{Max: 3, Until: "done"})
	if q.Gate != "until" || !slices.Equal(q.Options, []string{"break", "continue", "fail", "leave"}) {
		t.Errorf("until question %+v", q)
	}
	for _, want := range []string{`"Looks done to me."`, "could not be asked again", "after iteration 3", "max_reached"} {
		if !strings.Contains(q.Reason, want) {
			t.Errorf("until reason %q lacks %q", q.Reason, want)
		}
	}
}

// TestVoteFormat_Documented: docs/subagents.md quotes the answer format
// and the question asked again in exactly the words taskd gives.
func TestVoteFormat_Documented(t *testing.T) {
	data, err := os.ReadFile("../../docs/subagents.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "### Answers to vote on")
	parts := strings.Split(text[max(i, 0):], "```")
	if i < 0 || len(parts) < 4 {
		t.Fatalf("docs/subagents.md does not quote the answer format")
	}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for k, want := range []string{VoteFormat, AskVoteAgain} {
		if got := flat(parts[1+2*k]); got != flat(want) {
			t.Errorf("docs/subagents.md quotes\n%s\ntaskd gives\n%s", got, flat(want))
		}
	}
}
