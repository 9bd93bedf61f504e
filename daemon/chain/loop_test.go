package chain

import (
	"os"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/prompt"
)

// TestJudgeVerdict: a judge's verdict is its last loop sentinel, break or
// continue, written as loosely as subtask2 allows; prose has none.
func TestJudgeVerdict(t *testing.T) {
	tests := []struct {
		text, want string
	}{
		{"All tests pass.\n<subtask2 loop=break/>", "break"},
		{"Two tests still fail.\n<subtask2 loop=continue/>", "continue"},
		{`<SUBTASK2 LOOP="Break" >`, "break"},
		{`<subtask2 loop='continue'>`, "continue"},
		{"At first <subtask2 loop=break/>, but on a second look <subtask2 loop=continue/>", "continue"},
		{"The file is there, I think the condition holds.", ""},
		{"I would answer loop=break", ""},
		{"<subtask2 loop=stop/>", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := JudgeVerdict(tt.text); got != tt.want {
			t.Errorf("JudgeVerdict(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestJudgePrompt_Verdict: the judge is told both verdicts, each in a form
// JudgeVerdict reads, that one of them must end its answer, and asked
// again it is given both once more.
func TestJudgePrompt_Verdict(t *testing.T) {
	p := judgePrompt(&prompt.Loop{Max: 3, Until: "all tests pass"}, 1, "fix the tests", agent.Result{Summary: "fixed two"})
	i := strings.Index(p, "## Your answer")
	if i < 0 {
		t.Fatalf("no answer section:\n%s", p)
	}
	answer := p[i:]
	for _, v := range []string{"break", "continue"} {
		line := "<subtask2 loop=" + v + "/>"
		if !strings.Contains(answer, "\n"+line+"\n") || JudgeVerdict(line) != v {
			t.Errorf("the answer section does not give %s on a line of its own:\n%s", line, answer)
		}
		if !strings.Contains(AskJudgeAgain, line) {
			t.Errorf("asked again, the judge is not given %s: %s", line, AskJudgeAgain)
		}
	}
	if !strings.Contains(answer, "a person decides") {
		t.Errorf("the answer section does not say what follows an answer without a verdict:\n%s", answer)
	}
	if !strings.Contains(p, "<user-condition>\nall tests pass\n</user-condition>") {
		t.Errorf("the condition is not given verbatim:\n%s", p)
	}
}

// TestJudgeAgain_Documented: docs/prompt-commands.md quotes the question a
// judge is asked again in exactly taskd's words.
func TestJudgeAgain_Documented(t *testing.T) {
	data, err := os.ReadFile("../../docs/prompt-commands.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "**A judge's answer without a verdict**")
	parts := strings.Split(text[max(i, 0):], "```")
	if i < 0 || len(parts) < 2 {
		t.Fatalf("docs/prompt-commands.md does not quote the question asked again")
	}
	if got, want := strings.Join(strings.Fields(parts[1]), " "), strings.Join(strings.Fields(AskJudgeAgain), " "); got != want {
		t.Errorf("docs/prompt-commands.md quotes\n%s\ntaskd asks\n%s", got, want)
	}
}
