package prompt_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/prompt"
)

// Checklist: the auto workflow parses <subtask2 auto="true"> and runs what
// it holds.
func TestParseAutoOutput(t *testing.T) {
	tests := []struct {
		name, in string
		want     *prompt.Script
	}{
		{"the plan's form", `I will split the work in three steps.

<subtask2 auto="true">
/subtask{model:openai/gpt-4o && return:review || test || deploy} implement the feature
</subtask2>`, &prompt.Script{
			Leading: []prompt.Step{step(4, &prompt.Subtask{Overrides: prompt.Overrides{Model: "openai/gpt-4o", Return: []string{"review", "test", "deploy"}}})},
			Content: "implement the feature"}},
		{"one line, unquoted attribute, any case", `Reasoning. <SUBTASK2 Auto = TRUE> /subtask {loop:3 && until:tests pass} fix the tests</Subtask2 >`, &prompt.Script{
			Leading: []prompt.Step{step(1, &prompt.Subtask{Overrides: prompt.Overrides{Loop: &prompt.Loop{Max: 3, Until: "tests pass"}}})},
			Content: "fix the tests"}},
		{"single quotes and a multi-line prompt", "<subtask2 auto='true'>\n/subtask {agent:build}\nbuild it\nwell\n</subtask2>", &prompt.Script{
			Leading: []prompt.Step{step(2, &prompt.Subtask{Overrides: prompt.Overrides{Agent: "build"}})},
			Content: "build it\nwell"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompt.ParseAutoOutput(tt.in, prompt.ParseOptions{})
			if err != nil {
				t.Fatalf("ParseAutoOutput error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseAutoOutput\n got\n%s want\n%s", dump(got), dump(tt.want))
			}
		})
	}
}

func TestParseAutoOutput_Errors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no block", "I could not decide.", `the planner's output has no <subtask2 auto="true"> block; it must write its workflow in one`},
		{"not auto", `<subtask2 loop="break">/subtask x</subtask2>`, `the planner's output has no <subtask2 auto="true"> block; it must write its workflow in one`},
		{"unclosed", "x\n<subtask2 auto=\"true\">\n/subtask x", `line 2: <subtask2 auto="true"> is not closed by </subtask2>`},
		{"two blocks", "<subtask2 auto=\"true\">/subtask a</subtask2>\n<subtask2 auto=\"true\">/subtask b</subtask2>",
			`line 2: the planner's output has more than one <subtask2 auto="true"> block; it must have exactly one`},
		{"not a subtask", "<subtask2 auto=\"true\">\njust do it\n</subtask2>", `line 1: the planner's workflow must be a single /subtask {…} prompt, with no other slash lines before it`},
		{"other lines before", "<subtask2 auto=\"true\">\n/read x.md\n/subtask do it\n</subtask2>", `line 1: the planner's workflow must be a single /subtask {…} prompt, with no other slash lines before it`},
		{"lines after", "<subtask2 auto=\"true\">\n/subtask do it\n/push more\n</subtask2>", `line 1: the planner's workflow must be a single /subtask {…} prompt, with no slash lines after it`},
		{"auto again", "<subtask2 auto=\"true\">/subtask {auto:true} plan more</subtask2>", `line 1: the planner's workflow may not itself be auto:true`},
		{"bad block, line in the output", "thinking\nthinking\n<subtask2 auto=\"true\">\n/subtask {loop:many} x\n</subtask2>", `line 4: "/subtask {loop:many} x": loop must be a whole number ≥ 1, not "many"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := prompt.ParseAutoOutput(tt.in, prompt.ParseOptions{})
			var pe *prompt.Error
			if !errors.As(err, &pe) {
				t.Fatalf("ParseAutoOutput = %s, error %v; want a *prompt.Error", dump(s), err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("ParseAutoOutput error\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestError_Error(t *testing.T) {
	tests := []struct {
		err  *prompt.Error
		want string
	}{
		{&prompt.Error{Msg: "bad"}, "bad"},
		{&prompt.Error{Line: 3, Msg: "bad"}, "line 3: bad"},
		{&prompt.Error{Text: "/x", Msg: "bad"}, `"/x": bad`},
		{&prompt.Error{Line: 2, Text: strings.Repeat("é", 100), Msg: "bad"}, `line 2: "` + strings.Repeat("é", 79) + `…": bad`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %s, want %s", got, tt.want)
		}
	}
}
