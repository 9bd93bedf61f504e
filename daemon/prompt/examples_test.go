package prompt_test

import (
	"reflect"
	"testing"

	"github.com/taskd/taskd/daemon/prompt"
)

// The prompts of ikigai's prompt-processing design (worker, orchestrator,
// sequential pipeline, personas) parse to the phases it describes.
func TestParse_PromptProcessingExamples(t *testing.T) {
	tests := []struct {
		name, in string
		want     *prompt.Script
	}{
		{"worker", `/read src/auth/README.md
/read project/auth-design.md
Implement JWT validation in src/auth/token.c.
Follow the patterns in the docs above.
Write tests in tests/unit/test_token.c.
Run make check to verify.`, &prompt.Script{
			Leading: []prompt.Step{step(1, &prompt.Read{Path: "src/auth/README.md"}), step(2, &prompt.Read{Path: "project/auth-design.md"})},
			Content: "Implement JWT validation in src/auth/token.c.\nFollow the patterns in the docs above.\n" +
				"Write tests in tests/unit/test_token.c.\nRun make check to verify.",
		}},
		{"orchestrator", `/read project/requirements.md
/push name=research-a "Research approach A"
/push name=research-b "Research approach B"
/run
Analyze the requirements above.
Check research results with /check and incorporate findings.
Decide on best approach and document in DECISION.md.
/push name=implement "Implement the chosen approach from DECISION.md"`, &prompt.Script{
			Leading: []prompt.Step{
				step(1, &prompt.Read{Path: "project/requirements.md"}),
				step(2, &prompt.Push{Name: "research-a", Prompt: "Research approach A"}),
				step(3, &prompt.Push{Name: "research-b", Prompt: "Research approach B"}),
				step(4, &prompt.Run{}),
			},
			Content: "Analyze the requirements above.\nCheck research results with /check and incorporate findings.\n" +
				"Decide on best approach and document in DECISION.md.",
			Trailing: []prompt.Step{step(8, &prompt.Push{Name: "implement", Prompt: "Implement the chosen approach from DECISION.md"})},
		}},
		{"sequential pipeline", `/read project/task-spec.md
Complete Phase 1 of the task spec.
Verify all Phase 1 criteria pass.
/push name=phase2 "/read project/task-spec.md\nComplete Phase 2 of the task spec."`, &prompt.Script{
			Leading:  []prompt.Step{step(1, &prompt.Read{Path: "project/task-spec.md"})},
			Content:  "Complete Phase 1 of the task spec.\nVerify all Phase 1 criteria pass.",
			Trailing: []prompt.Step{step(4, &prompt.Push{Name: "phase2", Prompt: "/read project/task-spec.md\nComplete Phase 2 of the task spec."})},
		}},
		{"personas and skills", `/read .agents/personas/worker.md
/read .agents/skills/tdd-workflow.md
/read project/feature-spec.md
Implement the feature following TDD workflow.`, &prompt.Script{
			Leading: []prompt.Step{
				step(1, &prompt.Read{Path: ".agents/personas/worker.md"}),
				step(2, &prompt.Read{Path: ".agents/skills/tdd-workflow.md"}),
				step(3, &prompt.Read{Path: "project/feature-spec.md"}),
			},
			Content: "Implement the feature following TDD workflow.",
		}},
		{"the phases diagram", `/read project/design.md
/push name=prep "Prep task"
/run

Implement the feature.
Use patterns from the docs.

/push name=tests "Write tests"`, &prompt.Script{
			Leading: []prompt.Step{
				step(1, &prompt.Read{Path: "project/design.md"}),
				step(2, &prompt.Push{Name: "prep", Prompt: "Prep task"}),
				step(3, &prompt.Run{}),
			},
			Content:  "Implement the feature.\nUse patterns from the docs.",
			Trailing: []prompt.Step{step(8, &prompt.Push{Name: "tests", Prompt: "Write tests"})},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompt.Parse(tt.in, prompt.ParseOptions{})
			if err != nil {
				t.Fatalf("Parse error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse\n got\n%s want\n%s", dump(got), dump(tt.want))
			}
		})
	}
}

// A pushed prompt that starts with /read is the child's own prompt, kept
// verbatim; it is parsed when the child starts, and only then.
func TestParse_PushedPromptIsTheChildsPrompt(t *testing.T) {
	parent, err := prompt.Parse("Phase 1.\n/push name=phase2 \"/read project/task-spec.md\\nComplete Phase 2.\"", prompt.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	childPrompt := parent.Trailing[0].Cmd.(*prompt.Push).Prompt
	if want := "/read project/task-spec.md\nComplete Phase 2."; childPrompt != want {
		t.Fatalf("child prompt = %q, want %q", childPrompt, want)
	}
	child, err := prompt.Parse(childPrompt, prompt.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := &prompt.Script{Leading: []prompt.Step{step(1, &prompt.Read{Path: "project/task-spec.md"})}, Content: "Complete Phase 2."}
	if !reflect.DeepEqual(child, want) {
		t.Errorf("child script\n got\n%s want\n%s", dump(child), dump(want))
	}

	// A broken slash line in a pushed prompt is the child's problem, not
	// the parent's: the parent parses.
	if _, err := prompt.Parse(`/push "/pus x\ny"`, prompt.ParseOptions{}); err != nil {
		t.Errorf("Parse of a push whose prompt has an unknown command: %v", err)
	}
}

// The /subtask lines of the subtask2 plan (its auto planner's examples and
// README sections), with and without the space before the block.
func TestParse_SubtaskExamples(t *testing.T) {
	tests := []struct {
		in      string
		want    prompt.Overrides
		content string
	}{
		{"/subtask{agent:build} implement the auth system", prompt.Overrides{Agent: "build"}, "implement the auth system"},
		{"/subtask{return:validate the output || run the tests} build the feature",
			prompt.Overrides{Return: []string{"validate the output", "run the tests"}}, "build the feature"},
		{"/subtask{loop:5 && until:all tests pass} fix the failing tests",
			prompt.Overrides{Loop: &prompt.Loop{Max: 5, Until: "all tests pass"}}, "fix the failing tests"},
		{"/subtask{model:openai/gpt-4o && return:review || test || deploy} implement $FEATURE",
			prompt.Overrides{Model: "openai/gpt-4o", Return: []string{"review", "test", "deploy"}}, "implement $FEATURE"},
		{"/subtask{return:validate the output || run tests || deploy} implement the feature",
			prompt.Overrides{Return: []string{"validate the output", "run tests", "deploy"}}, "implement the feature"},
		{"/subtask {loop:10 && until:tests pass} make the tests pass",
			prompt.Overrides{Loop: &prompt.Loop{Max: 10, Until: "tests pass"}}, "make the tests pass"},
		{"/subtask {model:openai/gpt-4o && agent:build} build it", prompt.Overrides{Model: "openai/gpt-4o", Agent: "build"}, "build it"},
		{"/subtask {until:x && loop:5} do X\nthen Y", prompt.Overrides{Loop: &prompt.Loop{Max: 5, Until: "x"}}, "do X\nthen Y"},
		{"/subtask {as:plan && parallel:/plan-a $ARGUMENTS || /plan-b $ARGUMENTS} compare the plans",
			prompt.Overrides{As: "plan", Parallel: []string{"/plan-a $ARGUMENTS", "/plan-b $ARGUMENTS"}}, "compare the plans"},
	}
	for _, tt := range tests {
		s, err := prompt.Parse(tt.in, prompt.ParseOptions{})
		if err != nil {
			t.Errorf("Parse(%q) error: %v", tt.in, err)
			continue
		}
		want := &prompt.Script{Leading: []prompt.Step{step(1, &prompt.Subtask{Overrides: tt.want})}, Content: tt.content}
		if !reflect.DeepEqual(s, want) {
			t.Errorf("Parse(%q)\n got\n%s want\n%s", tt.in, dump(s), dump(want))
		}
	}
}
