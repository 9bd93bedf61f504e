package prompt_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/taskd/taskd/daemon/prompt"
)

// overridesTests are blocks and what they mean. Every block of subtask2's
// plan for its inline syntax (including its testing checklist) is here.
var overridesTests = []struct {
	name, in string
	want     prompt.Overrides
}{
	{"empty", `{}`, prompt.Overrides{}},
	{"empty with blanks", ` {  } `, prompt.Overrides{}},
	// Checklist: {model:x && agent:y} parses correctly.
	{"model and agent", `{model:x && agent:y}`, prompt.Overrides{Model: "x", Agent: "y"}},
	{"no spaces around &&", `{model:x&&agent:y}`, prompt.Overrides{Model: "x", Agent: "y"}},
	{"spaces around keys and values", `{ model : x  &&  agent :y }`, prompt.Overrides{Model: "x", Agent: "y"}},
	// Checklist: {return:a || b || c} creates an array of 3 returns.
	{"three returns", `{return:a || b || c}`, prompt.Overrides{Return: []string{"a", "b", "c"}}},
	// Checklist: {parallel:/cmd1 || /cmd2} creates an array of 2 parallels.
	{"two parallels", `{parallel:/cmd1 || /cmd2}`, prompt.Overrides{Parallel: []string{"/cmd1", "/cmd2"}}},
	// Checklist: {loop:5} runs exactly 5 times without evaluation.
	{"unconditional loop", `{loop:5}`, prompt.Overrides{Loop: &prompt.Loop{Max: 5}}},
	// Checklist: {loop:5 && until:done} evaluates the condition each iteration.
	{"conditional loop", `{loop:5 && until:done}`, prompt.Overrides{Loop: &prompt.Loop{Max: 5, Until: "done"}}},
	{"until before loop keeps the condition", `{until:x && loop:5}`, prompt.Overrides{Loop: &prompt.Loop{Max: 5, Until: "x"}}},
	{"until alone means at most 10", `{until:all tests pass}`, prompt.Overrides{Loop: &prompt.Loop{Max: 10, Until: "all tests pass"}}},
	{"untilCommand", `{loop:3 && untilCommand:"make test && make lint"}`,
		prompt.Overrides{Loop: &prompt.Loop{Max: 3, UntilCommand: "make test && make lint"}}},
	{"untilCommand alone", `{untilCommand:go test ./...}`, prompt.Overrides{Loop: &prompt.Loop{Max: 10, UntilCommand: "go test ./..."}}},
	// The plan's doc comment for the parser.
	{"model loop until", `{model:foo/bar && loop:10 && until:condition}`,
		prompt.Overrides{Model: "foo/bar", Loop: &prompt.Loop{Max: 10, Until: "condition"}}},
	// Phase 2: returns followed by another parameter.
	{"returns then model", `{return:first return || second return || third return && model:x}`,
		prompt.Overrides{Model: "x", Return: []string{"first return", "second return", "third return"}}},
	// Phase 6, README examples.
	{"provider model and agent", `{model:provider/id && agent:name}`, prompt.Overrides{Model: "provider/id", Agent: "name"}},
	{"loop 10 until", `{loop:10 && until:tests pass}`, prompt.Overrides{Loop: &prompt.Loop{Max: 10, Until: "tests pass"}}},
	{"gpt-4o build", `{model:openai/gpt-4o && agent:build}`, prompt.Overrides{Model: "openai/gpt-4o", Agent: "build"}},
	{"returns and model", `{return:validate || test || deploy && model:x}`,
		prompt.Overrides{Model: "x", Return: []string{"validate", "test", "deploy"}}},
	{"inline returns", `{return:validate the output || run tests || deploy}`,
		prompt.Overrides{Return: []string{"validate the output", "run tests", "deploy"}}},
	// The auto planner's prompt (Phase 5.3).
	{"planner: agent", `{agent:build}`, prompt.Overrides{Agent: "build"}},
	{"planner: returns", `{return:validate the output || run the tests}`,
		prompt.Overrides{Return: []string{"validate the output", "run the tests"}}},
	{"planner: loop", `{loop:5 && until:all tests pass}`, prompt.Overrides{Loop: &prompt.Loop{Max: 5, Until: "all tests pass"}}},
	{"planner: complex", `{model:openai/gpt-4o && return:review || test || deploy}`,
		prompt.Overrides{Model: "openai/gpt-4o", Return: []string{"review", "test", "deploy"}}},
	{"planner: parallel", `{parallel:/cmd1 args || /cmd2 args}`, prompt.Overrides{Parallel: []string{"/cmd1 args", "/cmd2 args"}}},
	{"as", `{as:plan}`, prompt.Overrides{As: "plan"}},
	{"auto", `{auto:true}`, prompt.Overrides{Auto: true}},
	{"auto with model", `{auto:true && model:opus}`, prompt.Overrides{Model: "opus", Auto: true}},
	{"value split at the first colon", `{until:the log says: done}`, prompt.Overrides{Loop: &prompt.Loop{Max: 10, Until: "the log says: done"}}},
	{"model with colons", `{model:ollama:llama3:8b}`, prompt.Overrides{Model: "ollama:llama3:8b"}},
	// Quoting.
	{"quoted value with brace", `{until:"the output has a } in it" && loop:3}`,
		prompt.Overrides{Loop: &prompt.Loop{Max: 3, Until: "the output has a } in it"}}},
	{"quoted value with && and ||", `{until:"lint passes && tests pass || it is late"}`,
		prompt.Overrides{Loop: &prompt.Loop{Max: 10, Until: "lint passes && tests pass || it is late"}}},
	{"quoted list items", `{return:"a || b" || "c && d" || "e } f"}`,
		prompt.Overrides{Return: []string{"a || b", "c && d", "e } f"}}},
	{"quoted escapes", `{until:"line one\nline \"two\"\t\\"}`,
		prompt.Overrides{Loop: &prompt.Loop{Max: 10, Until: "line one\nline \"two\"\t\\"}}},
	{"quoted run inside plain text", `{until:the output says "a } b" && loop:2}`,
		prompt.Overrides{Loop: &prompt.Loop{Max: 2, Until: `the output says "a } b"`}}},
	{"nested block in a return item", `{return:/subtask{return:a || b} x || c}`,
		prompt.Overrides{Return: []string{"/subtask{return:a || b} x", "c"}}},
	{"nested block in a parallel item", `{parallel:/subtask {model:x && agent:y} one || /review {loop:2} src}`,
		prompt.Overrides{Parallel: []string{"/subtask {model:x && agent:y} one", "/review {loop:2} src"}}},
	{"scalar keys keep a single |", `{until:a | b}`, prompt.Overrides{Loop: &prompt.Loop{Max: 10, Until: "a | b"}}},
	{"everything", `{as:impl && auto:true && agent:build && model:opus}`,
		prompt.Overrides{Model: "opus", Agent: "build", As: "impl", Auto: true}},
}

func TestParseOverrides(t *testing.T) {
	for _, tt := range overridesTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompt.ParseOverrides(tt.in)
			if err != nil {
				t.Fatalf("ParseOverrides(%q) error: %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseOverrides(%q)\n got %s %#v\nwant %s %#v", tt.in, got, got, tt.want, tt.want)
			}
		})
	}
}

func TestParseOverrides_Errors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no braces", `model:x`, `"model:x": a block starts with "{", as in {model:opus && loop:3}`},
		{"unknown key", `{modle:x}`, `"{modle:x}": unknown key "modle" (known: model, agent, loop, until, untilCommand, return, parallel, as, auto); did you mean model?`},
		{"unknown key far from any", `{priority:high}`, `"{priority:high}": unknown key "priority" (known: model, agent, loop, until, untilCommand, return, parallel, as, auto)`},
		{"unclosed", `{model:x && loop:5`, `"{model:x && loop:5": unclosed "{": the value of loop runs to the end; close the block with "}"`},
		{"unclosed after list", `{return:a || b`, `"{return:a || b": unclosed "{": the value of return runs to the end; close the block with "}"`},
		{"empty key", `{:x}`, `"{:x}": a parameter has an empty key before ':'`},
		{"missing colon", `{loop5}`, `"{loop5}": parameter "loop5" has no ':' (write key:value; to use && or } inside a value, quote the value)`},
		{"&& inside a value", `{until:a && b}`, `"{until:a && b}": parameter "b" has no ':' (write key:value; to use && or } inside a value, quote the value)`},
		{"empty parameter", `{model:x && }`, `"{model:x && }": empty parameter: write key:value between the && separators`},
		{"leading &&", `{&& model:x}`, `"{&& model:x}": empty parameter: write key:value between the && separators`},
		{"duplicate key", `{loop:5 && loop:6}`, `"{loop:5 && loop:6}": key loop appears twice`},
		{"empty value", `{model:}`, `"{model:}": key model has an empty value`},
		{"empty quoted value", `{model:""}`, `"{model:\"\"}": key model has an empty value`},
		{"empty first item", `{return: || b}`, `"{return: || b}": return item 1 is empty`},
		{"empty middle item", `{return:a || || b}`, `"{return:a || || b}": return item 2 is empty`},
		{"empty last item", `{parallel:/a || }`, `"{parallel:/a || }": parallel item 2 is empty`},
		{"empty quoted item", `{return:a || ""}`, `"{return:a || \"\"}": return item 2 is empty`},
		{"blank quoted value", `{until:"  "}`, `"{until:\"  \"}": key until has an empty value`},
		{"loop zero", `{loop:0}`, `"{loop:0}": loop must be a whole number ≥ 1, not "0"`},
		{"loop negative", `{loop:-1}`, `"{loop:-1}": loop must be a whole number ≥ 1, not "-1"`},
		{"loop plus", `{loop:+5}`, `"{loop:+5}": loop must be a whole number ≥ 1, not "+5"`},
		{"loop word", `{loop:five}`, `"{loop:five}": loop must be a whole number ≥ 1, not "five"`},
		{"loop huge", `{loop:99999999999999999999}`, `"{loop:99999999999999999999}": loop must be a whole number ≥ 1, not "99999999999999999999"`},
		{"old comma separator", `{loop:10,until:tests pass}`, `"{loop:10,until:tests pass}": loop must be a whole number ≥ 1, not "10,until:tests pass" (separate parameters with &&)`},
		{"old || separator", `{model:x||loop:5||until:condition}`, `"{model:x||loop:5||until:condition}": the value of model contains ||, which separates items only in return and parallel; separate parameters with && (or quote the value)`},
		{"old comma in model", `{model:openai/gpt-4o,agent:build}`, `"{model:openai/gpt-4o,agent:build}": model "openai/gpt-4o,agent:build" must be a single name, without blanks or commas (separate parameters with &&)`},
		{"forgotten &&", `{model:x agent:y}`, `"{model:x agent:y}": model "x agent:y" must be a single name, without blanks or commas (separate parameters with &&)`},
		{"bad as", `{as:my result}`, `"{as:my result}": as "my result" is not a name: use 1 to 64 letters, digits, _ or -`},
		{"auto not true", `{auto:yes}`, `"{auto:yes}": auto takes only true (auto:true), not "yes"`},
		{"auto with return", `{auto:true && return:x}`, `"{auto:true && return:x}": auto cannot be combined with return: the planner writes the whole workflow`},
		{"auto with loop and parallel", `{auto:true && loop:2 && parallel:/a}`, `"{auto:true && loop:2 && parallel:/a}": auto cannot be combined with loop or parallel: the planner writes the whole workflow`},
		{"until and untilCommand", `{until:x && untilCommand:y}`, `"{until:x && untilCommand:y}": until and untilCommand cannot both be set: a loop ends either on a judge's verdict or on a command's exit status`},
		{"text after quote", `{until:"a" b}`, `"{until:\"a\" b}": text after the closing quote of the value of until (end the value there, or quote all of it)`},
		{"|| after a quoted scalar", `{until:"a" || b}`, `"{until:\"a\" || b}": text after the closing quote of the value of until (end the value there, or quote all of it)`},
		{"unknown escape", `{until:"a\qb"}`, `"{until:\"a\\qb\"}": unknown escape \q in the value of until (known: \n, \t, \", \\)`},
		{"unclosed quoted value", `{until:"abc}`, `"{until:\"abc}": unclosed quote in the value of until: add the closing "`},
		{"stray quote in plain text", `{until:it is 6" tall}`, `"{until:it is 6\" tall}": unclosed quote in the value of until: add the closing ", or write \" inside a quoted value`},
		{"unbalanced nested brace", `{return:/subtask{x a}`, `"{return:/subtask{x a}": unclosed "{": the value of return runs to the end; close the block with "}"`},
		{"text after the block", `{model:x} and more`, `"{model:x} and more": text after the closing "}" of the block`},
		{"not UTF-8", "{until:\xff}", "invalid UTF-8 (byte 0xff); write the text as UTF-8"},
		{"quoted key", `{"model":x}`, `"{\"model\":x}": unknown key "\"model\"" (known: model, agent, loop, until, untilCommand, return, parallel, as, auto); did you mean model?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := prompt.ParseOverrides(tt.in)
			var pe *prompt.Error
			if !errors.As(err, &pe) {
				t.Fatalf("ParseOverrides(%q) error = %v, want a *prompt.Error", tt.in, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("ParseOverrides(%q) error\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

// Ensure a block's String parses back to the same overrides.
func TestOverrides_String(t *testing.T) {
	for _, tt := range overridesTests {
		s := tt.want.String()
		got, err := prompt.ParseOverrides(s)
		if err != nil {
			t.Errorf("%s: ParseOverrides(%q) error: %v", tt.name, s, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: ParseOverrides(%q) = %#v, want %#v", tt.name, s, got, tt.want)
		}
	}
	full := prompt.Overrides{Model: "opus", Agent: "build", Loop: &prompt.Loop{Max: 5, Until: "tests pass"},
		Return: []string{"review it", "/ship {model:x} now"}, Parallel: []string{"a && b", " padded "}, As: "impl"}
	if got, want := full.String(), `{model:opus && agent:build && loop:5 && until:tests pass && return:review it || "/ship {model:x} now" && parallel:"a && b" || " padded " && as:impl}`; got != want {
		t.Errorf("String()\n got %s\nwant %s", got, want)
	}
}
