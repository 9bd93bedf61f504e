package flow

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/taskfile"
	"github.com/taskd/taskd/workflows"
)

// TestDecides: a step is a gate, whose model must give a verdict, when its
// result decides where the workflow goes: a passed or failed edge leaves
// it, or its edge enters a join (the branch's verdict). A step whose one
// edge goes on whatever its result is not.
func TestDecides(t *testing.T) {
	defs := map[string]*navigator.Workflow{}
	for _, d := range workflows.Builtin() {
		defs[d.ID] = d.Workflow
	}
	tests := []struct {
		workflow, step string
		want           bool
	}{
		{"quick-task", "work", false},
		{"quick-task", "verify", true},
		{"quick-task", "hitl_blocked", true},
		{"parallel-checks", "implement", false},
		{"parallel-checks", "write_tests", false},
		{"parallel-checks", "run_tests", true},   // into the join
		{"parallel-checks", "review_code", true}, // into the join
		{"parallel-checks", "commit", false},
	}
	for _, tt := range tests {
		wf := defs[tt.workflow]
		if wf == nil {
			t.Fatalf("no built-in workflow %s", tt.workflow)
		}
		if got := decides(wf, tt.step); got != tt.want {
			t.Errorf("decides(%s, %s) = %v, want %v", tt.workflow, tt.step, got, tt.want)
		}
	}
	// Every gate node of every built-in workflow is one.
	for id, wf := range defs {
		for _, name := range wf.Nodes() {
			if n := wf.Node(name); n.Type == navigator.TypeGate && !decides(wf, name) {
				t.Errorf("%s: the gate %s does not decide", id, name)
			}
		}
	}
}

// jsonObject finds the JSON objects written in a prompt.
var jsonObject = regexp.MustCompile(`\{[^{}]*\}`)

// verdictExamples returns the JSON objects of text, which must each be a
// result object with a boolean success.
func verdictExamples(t *testing.T, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, s := range jsonObject.FindAllString(text, -1) {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Errorf("the example %s is not JSON: %v", s, err)
			continue
		}
		if _, ok := m["success"].(bool); !ok || !agent.HasReport(s) {
			t.Errorf("the example %s is no result object", s)
		}
		out = append(out, m)
	}
	return out
}

// TestStepPrompt_Verdict: a step's prompt ends with the verdict's format —
// an example taskd reads as the result — and says the line is needed;
// asked again, the agent is given both verdicts, exactly.
func TestStepPrompt_Verdict(t *testing.T) {
	tk := &taskfile.Task{ID: "7", Subject: "Add a greeting"}
	tk.EnsureMetadata().Set("workflowType", "quick-task")
	f := &flowRun{id: "7", t: tk}
	p := stepPrompt(f, &navigator.Response{CurrentStep: "verify", StepInstructions: &navigator.StepInstructions{Name: "Check the work"}})
	i := strings.Index(p, "## Your answer")
	if i < 0 {
		t.Fatalf("no answer section:\n%s", p)
	}
	answer := p[i:]
	if got := verdictExamples(t, answer); len(got) != 1 {
		t.Errorf("the answer section has %d examples, want 1:\n%s", len(got), answer)
	}
	for _, want := range []string{`"success": false`, "asked for it again, and then a person decides"} {
		if !strings.Contains(answer, want) {
			t.Errorf("the answer section lacks %q:\n%s", want, answer)
		}
	}
	// A step whose one edge goes on whatever its result is not told a
	// person decides.
	set, _ := workflows.Load()
	f.set = set
	for step, want := range map[string]bool{"work": false, "verify": true} {
		p := stepPrompt(f, &navigator.Response{CurrentStep: step})
		if got := strings.Contains(p, "a person decides"); got != want {
			t.Errorf("step %s: told a person decides = %v, want %v", step, got, want)
		}
	}
	got := verdictExamples(t, AskStepAgain)
	if len(got) != 2 || got[0]["success"] != true || got[1]["success"] != false {
		t.Errorf("asked again, the agent is given %v, want a passing and a failing verdict", got)
	}
}

// docBlocks returns the first n fenced blocks of the manual page path that
// follow the text after, each with its blanks collapsed: the words a
// prompt is documented with.
func docBlocks(t *testing.T, path, after string, n int) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, after)
	if i < 0 {
		t.Fatalf("%s has no %q", path, after)
	}
	parts := strings.Split(text[i:], "```")
	var out []string
	for k := 1; k < len(parts) && len(out) < n; k += 2 {
		out = append(out, strings.Join(strings.Fields(parts[k]), " "))
	}
	if len(out) < n {
		t.Fatalf("%s has %d blocks after %q, want %d", path, len(out), after, n)
	}
	return out
}

// TestStepVerdict_Documented: docs/workflows.md quotes the verdict format
// and the question asked again in exactly the words a step is given.
func TestStepVerdict_Documented(t *testing.T) {
	tk := &taskfile.Task{ID: "7", Subject: "Add a greeting"}
	tk.EnsureMetadata().Set("workflowType", "quick-task")
	p := stepPrompt(&flowRun{id: "7", t: tk}, &navigator.Response{CurrentStep: "verify"})
	answer := strings.Join(strings.Fields(p[strings.Index(p, "## Your answer"):]), " ")
	blocks := docBlocks(t, "../../docs/workflows.md", "### The verdict of a step", 2)
	if blocks[0] != answer {
		t.Errorf("docs/workflows.md quotes the answer format as\n%s\nthe prompt says\n%s", blocks[0], answer)
	}
	if again := strings.Join(strings.Fields(AskStepAgain), " "); blocks[1] != again {
		t.Errorf("docs/workflows.md quotes the question asked again as\n%s\ntaskd asks\n%s", blocks[1], again)
	}
}
