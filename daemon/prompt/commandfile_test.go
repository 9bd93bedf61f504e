package prompt_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/prompt"
)

var commandFileTests = []struct {
	name, in string
	want     *prompt.CommandFile
}{
	{"no frontmatter", "Review $ARGUMENTS carefully.\n", &prompt.CommandFile{Name: "cmd", Body: "Review $ARGUMENTS carefully."}},
	{"scalars", `---
description: Review the code
agent: plan
model: anthropic/claude-opus
subtask: true
---

Review $ARGUMENTS.
`, &prompt.CommandFile{Name: "cmd", Description: "Review the code", Subtask: true,
		Overrides: prompt.Overrides{Agent: "plan", Model: "anthropic/claude-opus"}, Body: "Review $ARGUMENTS."}},
	{"quoted scalars and comments", `---
# what it does
description: "Review: the \"code\"\tnow" # a trailing comment
agent: 'it''s'
subtask: false
---
x`, &prompt.CommandFile{Name: "cmd", Description: "Review: the \"code\"\tnow", Overrides: prompt.Overrides{Agent: "it's"}, Body: "x"}},
	{"return as a string", "---\nreturn: Summarise what changed\n---\nx",
		&prompt.CommandFile{Name: "cmd", Overrides: prompt.Overrides{Return: []string{"Summarise what changed"}}, Body: "x"}},
	{"return as a block list", `---
return:
  - Check the output for mistakes
  - /test $ARGUMENTS
  - "/subtask {loop:3 && until:tests pass} fix what failed"
---
x`, &prompt.CommandFile{Name: "cmd", Overrides: prompt.Overrides{Return: []string{
		"Check the output for mistakes", "/test $ARGUMENTS", "/subtask {loop:3 && until:tests pass} fix what failed"}}, Body: "x"}},
	{"return as a compact block list", "---\nreturn:\n- a\n- b\nagent: x\n---\nbody",
		&prompt.CommandFile{Name: "cmd", Overrides: prompt.Overrides{Agent: "x", Return: []string{"a", "b"}}, Body: "body"}},
	{"return as a flow list", "---\nreturn: [a, 'b, c', \"d\"]\n---\nbody",
		&prompt.CommandFile{Name: "cmd", Overrides: prompt.Overrides{Return: []string{"a", "b, c", "d"}}, Body: "body"}},
	{"parallel as a string", "---\nparallel: /plan-a $ARGUMENTS, /plan-b $ARGUMENTS\n---\nbody",
		&prompt.CommandFile{Name: "cmd", Overrides: prompt.Overrides{Parallel: []string{"/plan-a $ARGUMENTS", "/plan-b $ARGUMENTS"}}, Body: "body"}},
	{"parallel as a list of strings", "---\nparallel:\n  - /research auth\n  - /research sessions\n---\nbody",
		&prompt.CommandFile{Name: "cmd", Overrides: prompt.Overrides{Parallel: []string{"/research auth", "/research sessions"}}, Body: "body"}},
	{"parallel as a list of mappings", `---
parallel:
  - command: research
    arguments: the auth flow
  - command: /lint
  - {command: review, arguments: src/}
---
body`, &prompt.CommandFile{Name: "cmd", Overrides: prompt.Overrides{Parallel: []string{"/research the auth flow", "/lint", "/review src/"}}, Body: "body"}},
	{"loop as a number", "---\nloop: 5\n---\nbody", &prompt.CommandFile{Name: "cmd", Overrides: prompt.Overrides{Loop: &prompt.Loop{Max: 5}}, Body: "body"}},
	{"loop as a flow mapping", "---\nloop: {max: 5, until: all tests pass}\n---\nbody",
		&prompt.CommandFile{Name: "cmd", Overrides: prompt.Overrides{Loop: &prompt.Loop{Max: 5, Until: "all tests pass"}}, Body: "body"}},
	{"loop as a block mapping", "---\nloop:\n  until: \"the build is green\"\n  max: 3\n---\nbody",
		&prompt.CommandFile{Name: "cmd", Overrides: prompt.Overrides{Loop: &prompt.Loop{Max: 3, Until: "the build is green"}}, Body: "body"}},
	{"loop until alone", "---\nloop:\n  until: done\n---\nbody",
		&prompt.CommandFile{Name: "cmd", Overrides: prompt.Overrides{Loop: &prompt.Loop{Max: 10, Until: "done"}}, Body: "body"}},
	{"loop untilCommand", "---\nloop: {max: 4, untilCommand: \"go test ./...\"}\n---\nbody",
		&prompt.CommandFile{Name: "cmd", Overrides: prompt.Overrides{Loop: &prompt.Loop{Max: 4, UntilCommand: "go test ./..."}}, Body: "body"}},
	// subtask2's auto command (Phase 6 of its plan).
	{"auto", "---\nagent: build\nmodel: openai/gpt-4o\nsubtask2: auto\n---\n\n$ARGUMENTS\n",
		&prompt.CommandFile{Name: "cmd", Overrides: prompt.Overrides{Agent: "build", Model: "openai/gpt-4o", Auto: true}, Body: "$ARGUMENTS"}},
	{"as", "---\nas: plan-a\nagent: x\n---\nbody", &prompt.CommandFile{Name: "cmd", Overrides: prompt.Overrides{Agent: "x", As: "plan-a"}, Body: "body"}},
	{"empty frontmatter and CRLF", "---\r\n---\r\nbody\r\n", &prompt.CommandFile{Name: "cmd", Body: "body\r"}},
	{"byte order mark", "\ufeff---\nagent: x\n---\nbody", &prompt.CommandFile{Name: "cmd", Overrides: prompt.Overrides{Agent: "x"}, Body: "body"}},
	{"body with --- lines", "---\nagent: x\n---\n---\nnot frontmatter\n---", &prompt.CommandFile{Name: "cmd", Overrides: prompt.Overrides{Agent: "x"}, Body: "---\nnot frontmatter\n---"}},
	{"empty values in quotes are unset", "---\ndescription: \"\"\nmodel: ''\n---\nbody", &prompt.CommandFile{Name: "cmd", Body: "body"}},
	{"plain value with # inside", "---\ndescription: issue#12 and C# # comment\n---\nbody", &prompt.CommandFile{Name: "cmd", Description: "issue#12 and C#", Body: "body"}},
}

func TestParseCommandFile(t *testing.T) {
	for _, tt := range commandFileTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompt.ParseCommandFile("cmd", []byte(tt.in))
			if err != nil {
				t.Fatalf("ParseCommandFile(%q) error: %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseCommandFile(%q)\n got %#v\nwant %#v", tt.in, got, tt.want)
			}
			again, err := prompt.ParseCommandFile("cmd", []byte(got.String()))
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("ParseCommandFile(String()) of\n%s\n= %#v, %v", got.String(), again, err)
			}
		})
	}
}

func TestParseCommandFile_Errors(t *testing.T) {
	tests := []struct{ name, cmd, in, want string }{
		{"bad name", "Review", "x", `command name "Review" is not a command word: use lower-case letters, digits, _ and -, starting with a letter`},
		{"built-in name", "push", "x", "a command file cannot be named push: /push is built in"},
		{"agent command name", "check", "x", "a command file cannot be named check: /check is built in"},
		{"not UTF-8", "cmd", "---\nagent: a\xff\n---\nb", "line 2: invalid UTF-8 (byte 0xff); write the text as UTF-8"},
		{"no body", "cmd", "---\nagent: x\n---\n\n", "line 5: the command has no prompt; write it after the frontmatter, with $ARGUMENTS where the arguments go"},
		{"empty file", "cmd", "", "line 1: the command has no prompt; write it after the frontmatter, with $ARGUMENTS where the arguments go"},
		{"unclosed frontmatter", "cmd", "---\nagent: x\nbody", `line 1: "---": the frontmatter that starts here has no closing --- line`},
		{"unknown key", "cmd", "---\nagent: x\nmodle: y\n---\nb", `line 3: "modle: y": unknown key "modle" (known: description, agent, model, subtask, return, parallel, loop, as, subtask2); did you mean model?`},
		{"as not a name", "cmd", "---\nas: the plan\n---\nb", `line 2: "as: the plan": as "the plan" is not a name: use 1 to 64 letters, digits, _ or -`},
		{"pipe arguments key", "cmd", "---\narguments: x\n---\nb", `line 2: "arguments: x": unknown key "arguments" (known: description, agent, model, subtask, return, parallel, loop, as, subtask2)`},
		{"duplicate key", "cmd", "---\nagent: x\nagent: y\n---\nb", `line 3: "agent: y": key agent appears twice`},
		{"not key value", "cmd", "---\njust text\n---\nb", `line 2: "just text": expected key: value (keys are plain words; quote values that contain ": ")`},
		{"colon in plain value", "cmd", "---\ndescription: Review: the code\n---\nb", `line 2: "description: Review: the code": a plain value cannot contain ": " or end with ":"; quote the value`},
		{"tab indentation", "cmd", "---\nreturn:\n\t- a\n---\nb", `line 3: "\t- a": a tab indents this line; indent with spaces`},
		{"multi-line value", "cmd", "---\ndescription: one\n  two\n---\nb", `line 3: "  two": unexpected indentation (a value must fit on its line, and nesting goes one level deep)`},
		{"block scalar", "cmd", "---\ndescription: |\n  text\n---\nb", `line 2: "description: |": a value cannot start with '|' here (this parser reads only plain, quoted and one-line list values); quote the value`},
		{"anchor", "cmd", "---\nmodel: &m opus\n---\nb", `line 2: "model: &m opus": a value cannot start with '&' here (this parser reads only plain, quoted and one-line list values); quote the value`},
		{"unclosed quote", "cmd", "---\ndescription: \"abc\n---\nb", `line 2: "description: \"abc": unclosed quote: a quoted value must end on its line`},
		{"bad escape", "cmd", "---\ndescription: \"a\\x\"\n---\nb", `line 2: "description: \"a\\x\"": unsupported escape \x in a quoted value (supported: \\, \", \n, \t, \r)`},
		{"text after quote", "cmd", "---\ndescription: \"a\" b\n---\nb", `line 2: "description: \"a\" b": unexpected text after the value: "b"`},
		{"unclosed flow list", "cmd", "---\nreturn: [a, b\n---\nb", `line 2: "return: [a, b": a flow list must close on its line with ]`},
		{"trailing comma", "cmd", "---\nreturn: [a, ]\n---\nb", `line 2: "return: [a, ]": empty item in a flow collection`},
		{"nested flow", "cmd", "---\nreturn: [a, [b]]\n---\nb", `line 2: "return: [a, [b]]": nested or unclosed brackets in a flow collection; quote the value or use a block list`},
		{"empty list item", "cmd", "---\nreturn:\n  -\n---\nb", `line 3: "  -": empty list item (items go on the line of their -)`},
		{"nested list", "cmd", "---\nreturn:\n  - - a\n---\nb", `line 3: "  - - a": a value cannot start with '-' here (this parser reads only plain, quoted and one-line list values); quote the value`},
		{"flow list as a list item", "cmd", "---\nreturn:\n  - [a]\n---\nb", `line 3: "  - [a]": a value cannot start with '[' here (this parser reads only plain, quoted and one-line list values); quote the value`},
		{"deeper nesting", "cmd", "---\nloop:\n  max:\n    a: 1\n---\nb", `line 4: "    a: 1": unexpected indentation (a value must fit on its line, and nesting goes one level deep)`},
		{"no value", "cmd", "---\nmodel:\n---\nb", `line 2: "model:": model has no value`},
		{"null value", "cmd", "---\nmodel: ~\n---\nb", `line 2: "model: ~": model has no value`},
		{"list for a scalar", "cmd", "---\nagent: [a]\n---\nb", `line 2: "agent: [a]": agent takes a single value, not a list or mapping`},
		{"model with blank", "cmd", "---\nmodel: claude opus\n---\nb", `line 2: "model: claude opus": model "claude opus" contains a blank`},
		{"subtask yes", "cmd", "---\nsubtask: yes\n---\nb", `line 2: "subtask: yes": subtask must be true or false`},
		{"subtask quoted", "cmd", "---\nsubtask: \"true\"\n---\nb", `line 2: "subtask: \"true\"": subtask must be true or false`},
		{"subtask2 other", "cmd", "---\nsubtask2: manual\n---\nb", `line 2: "subtask2: manual": subtask2 takes only auto (subtask2: auto)`},
		{"return mapping", "cmd", "---\nreturn:\n  a: b\n---\nb", `line 3: "  a: b": return takes a string or a list, not a mapping`},
		{"return item mapping", "cmd", "---\nreturn:\n  - until: x\n---\nb", `line 3: "  - until: x": return items must be strings`},
		{"empty return item", "cmd", "---\nreturn: ['a', '']\n---\nb", `line 2: "return: ['a', '']": return item 2 is empty`},
		{"empty parallel item", "cmd", "---\nparallel: /a, , /b\n---\nb", `line 2: "parallel: /a, , /b": parallel item 2 is empty`},
		{"parallel item without command", "cmd", "---\nparallel:\n  - arguments: x\n---\nb", `line 3: "  - arguments: x": a parallel item needs command:`},
		{"parallel item bad command", "cmd", "---\nparallel:\n  - command: Do It\n---\nb", `line 3: "  - command: Do It": command "Do It" is not a command word`},
		{"parallel item unknown key", "cmd", "---\nparallel:\n  - command: a\n    args: x\n---\nb", `line 4: "    args: x": unknown key "args" in a parallel item (known: command, arguments)`},
		{"parallel item badly indented", "cmd", "---\nparallel:\n  - command: a\n      arguments: x\n---\nb", `line 4: "      arguments: x": unexpected indentation (a value must fit on its line, and nesting goes one level deep)`},
		{"loop zero", "cmd", "---\nloop: 0\n---\nb", `line 2: "loop: 0": loop must be a whole number ≥ 1, not "0"`},
		{"loop quoted", "cmd", "---\nloop: \"5\"\n---\nb", `line 2: "loop: \"5\"": loop takes a number or a mapping such as {max: 5, until: the tests pass}`},
		{"loop max bad", "cmd", "---\nloop: {max: x}\n---\nb", `line 2: "loop: {max: x}": loop.max must be a whole number ≥ 1`},
		{"loop unknown key", "cmd", "---\nloop:\n  max: 2\n  when: x\n---\nb", `line 4: "  when: x": unknown key "when" in loop (known: max, until, untilCommand)`},
		{"loop empty", "cmd", "---\nloop: {}\n---\nb", `line 2: "loop: {}": loop needs max, until or untilCommand`},
		{"loop empty until", "cmd", "---\nloop: {max: 2, until: ''}\n---\nb", `line 2: "loop: {max: 2, until: ''}": loop.until is empty`},
		{"loop both untils", "cmd", "---\nloop: {until: a, untilCommand: b}\n---\nb", `line 2: "loop: {until: a, untilCommand: b}": until and untilCommand cannot both be set: a loop ends either on a judge's verdict or on a command's exit status`},
		{"flow map without space", "cmd", "---\nloop: {max:5}\n---\nb", `line 2: "loop: {max:5}": expected key: value in the flow mapping`},
		{"flow map duplicate", "cmd", "---\nloop: {max: 5, max: 6}\n---\nb", `line 2: "loop: {max: 5, max: 6}": key max appears twice`},
		// The checklist's "auto commands ignore frontmatter return/parallel":
		// taskd refuses them instead of ignoring them.
		{"auto with return", "cmd", "---\nreturn: review\nsubtask2: auto\n---\n$ARGUMENTS", `line 3: "subtask2: auto": subtask2: auto cannot be combined with return: the planner writes the whole workflow`},
		{"auto with parallel and loop", "cmd", "---\nsubtask2: auto\nparallel: /a\nloop: 2\n---\n$ARGUMENTS", `line 4: "loop: 2": subtask2: auto cannot be combined with loop or parallel: the planner writes the whole workflow`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := prompt.ParseCommandFile(tt.cmd, []byte(tt.in))
			var pe *prompt.Error
			if !errors.As(err, &pe) {
				t.Fatalf("ParseCommandFile(%q) = %#v, error %v; want a *prompt.Error", tt.in, c, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("ParseCommandFile(%q) error\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestCommandFile_Expand(t *testing.T) {
	c, err := prompt.ParseCommandFile("review", []byte("---\nsubtask: true\n---\nReview $ARGUMENTS.\nThen list $ARGUMENTS again."))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Expand("src/ $RESULT[x]"), "Review src/ $RESULT[x].\nThen list src/ $RESULT[x] again."; got != want {
		t.Errorf("Expand = %q, want %q", got, want)
	}
	if got, want := c.Expand(""), "Review .\nThen list  again."; got != want {
		t.Errorf("Expand(\"\") = %q, want %q", got, want)
	}
	if got, want := c.Expand("$ARGUMENTS"), "Review $ARGUMENTS.\nThen list $ARGUMENTS again."; got != want {
		t.Errorf("Expand of $ARGUMENTS itself = %q, want %q (no second pass)", got, want)
	}
	plain, _ := prompt.ParseCommandFile("lint", []byte("Run the linters."))
	if got, want := plain.Expand("  pkg/a  "), "Run the linters.\n\npkg/a"; got != want {
		t.Errorf("Expand without $ARGUMENTS = %q, want %q", got, want)
	}
	if got, want := plain.Expand(" "), "Run the linters."; got != want {
		t.Errorf("Expand of blank args without $ARGUMENTS = %q, want %q", got, want)
	}
	// $TURN has no meaning in taskd (there is no chat to quote): it stays text.
	turn, _ := prompt.ParseCommandFile("auto", []byte("---\nsubtask2: auto\n---\n$ARGUMENTS\n$TURN[2]"))
	if got, want := turn.Expand("plan it"), "plan it\n$TURN[2]"; got != want {
		t.Errorf("Expand with $TURN = %q, want %q", got, want)
	}
}

// A command invoked with a block: the block goes over the frontmatter.
func TestCommandFile_InvokeWithBlock(t *testing.T) {
	c, err := prompt.ParseCommandFile("review", []byte("---\nmodel: sonnet\nagent: plan\nloop: {max: 3, until: no findings}\n---\nReview $ARGUMENTS."))
	if err != nil {
		t.Fatal(err)
	}
	s, err := prompt.Parse("/review {model:opus && return:fix the findings} src/", prompt.ParseOptions{Commands: func(n string) bool { return n == c.Name }})
	if err != nil {
		t.Fatal(err)
	}
	inv := s.Leading[0].Cmd.(*prompt.Invoke)
	got, err := prompt.MergeOverrides(c.Overrides, inv.Overrides)
	if err != nil {
		t.Fatal(err)
	}
	want := prompt.Overrides{Model: "opus", Agent: "plan", Loop: &prompt.Loop{Max: 3, Until: "no findings"}, Return: []string{"fix the findings"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged = %#v, want %#v", got, want)
	}
	if got, want := c.Expand(inv.Args), "Review src/."; got != want {
		t.Errorf("Expand = %q, want %q", got, want)
	}
	if !strings.Contains(c.String(), "loop:\n  max: 3\n  until: \"no findings\"\n") {
		t.Errorf("String() = %q", c.String())
	}
}
