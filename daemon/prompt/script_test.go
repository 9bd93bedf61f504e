package prompt_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/prompt"
)

// userCommands is the ParseOptions of tests: command files review, fix and
// read (the last shadowed by the built-in).
var userCommands = prompt.ParseOptions{Commands: func(name string) bool {
	return name == "review" || name == "fix" || name == "read"
}}

// dump shows a script with its steps' types, for failure messages.
func dump(s *prompt.Script) string {
	if s == nil {
		return "<nil>"
	}
	var b strings.Builder
	for _, st := range s.Leading {
		fmt.Fprintf(&b, "  leading L%d %T %s\n", st.Line, st.Cmd, st.Cmd)
	}
	fmt.Fprintf(&b, "  content %q\n", s.Content)
	for _, st := range s.Trailing {
		fmt.Fprintf(&b, "  trailing L%d %T %s\n", st.Line, st.Cmd, st.Cmd)
	}
	return b.String()
}

func step(line int, c prompt.Command) prompt.Step { return prompt.Step{Line: line, Cmd: c} }

var parseTests = []struct {
	name, in string
	want     *prompt.Script
}{
	{"content only", "Fix the bug.\nThen run the tests.", &prompt.Script{Content: "Fix the bug.\nThen run the tests."}},
	{"empty", "", &prompt.Script{}},
	{"blank", "\n  \n\t\n", &prompt.Script{}},
	{"content is trimmed of blank lines only", "\n\n  indented first\n\n\tlast  \n\n", &prompt.Script{Content: "  indented first\n\n\tlast  "}},
	{"leading read", "/read notes.md\nSummarise them.", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Read{Path: "notes.md"})}, Content: "Summarise them."}},
	{"blank lines in the leading block", "\n/read a.md\n\n/read b.md\n  \nDo it.\n\nNow.\n\n", &prompt.Script{
		Leading: []prompt.Step{step(2, &prompt.Read{Path: "a.md"}), step(4, &prompt.Read{Path: "b.md"})}, Content: "Do it.\n\nNow."}},
	{"quoted path and tilde", "/read \"my notes/a b.md\"\n/read ~/x.md\n/read\t/etc/hosts\nGo.", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Read{Path: "my notes/a b.md"}), step(2, &prompt.Read{Path: "~/x.md"}), step(3, &prompt.Read{Path: "/etc/hosts"})},
		Content: "Go."}},
	{"content starting with a path", "/usr/bin/foo is broken\nfix it", &prompt.Script{Content: "/usr/bin/foo is broken\nfix it"}},
	{"a path alone", "/path/to/file", &prompt.Script{Content: "/path/to/file"}},
	{"upper case is not a command", "/README.md is stale\n/Push it", &prompt.Script{Content: "/README.md is stale\n/Push it"}},
	{"word then colon is not a command", "/todo: fix it", &prompt.Script{Content: "/todo: fix it"}},
	{"indented slash line is content", "  /push x\nmore", &prompt.Script{Content: "  /push x\nmore"}},
	{"slash line in the middle is content", "Do A.\n/push name=x \"X\"\n/etc is a directory\nDo B.", &prompt.Script{
		Content: "Do A.\n/push name=x \"X\"\n/etc is a directory\nDo B."}},
	{"trailing push", "Do A.\n\n/push name=b \"Do B\"\n\n/push Do C\n", &prompt.Script{
		Content: "Do A.", Trailing: []prompt.Step{step(3, &prompt.Push{Name: "b", Prompt: "Do B"}), step(5, &prompt.Push{Prompt: "Do C"})}}},
	{"only slash lines are leading", "/push name=a \"A\"\n/run", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Push{Name: "a", Prompt: "A"}), step(2, &prompt.Run{})}}},
	{"carriage returns", "/read a.md\r\nDo it.\r\nNow.\r\n/push b\r\n", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Read{Path: "a.md"})}, Content: "Do it.\r\nNow.\r",
		Trailing: []prompt.Step{step(4, &prompt.Push{Prompt: "b"})}}},
	{"push options in any order", "/push timeout=90 agent=Reviewer model=opus name=rev-1 review the diff\ngo", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Push{Name: "rev-1", Model: "opus", Agent: "Reviewer", Timeout: 90 * time.Second, Prompt: "review the diff"})},
		Content: "go"}},
	{"push timeout as a duration and quoted option", "/push timeout=1m30s model=\"opus\" \"say \\\"hi\\\"\\tand\\\\bye\"", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Push{Model: "opus", Timeout: 90 * time.Second, Prompt: "say \"hi\"\tand\\bye"})}}},
	{"push unquoted prompt keeps backslashes", `/push a\nb "c"`, &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Push{Prompt: `a\nb "c"`})}}},
	{"push prompt starting with a slash line is verbatim", "/push \"/read spec.md\\n/push name=x \\\"y\\\"\\nDo it.\"", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Push{Prompt: "/read spec.md\n/push name=x \"y\"\nDo it."})}}},
	{"push after and seq", "/push name=a \"A\"\n/push name=b after=a seq=true \"B\"\n/push after=a,b,a seq=false C\ngo", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Push{Name: "a", Prompt: "A"}), step(2, &prompt.Push{Name: "b", After: []string{"a"}, Seq: true, Prompt: "B"}),
			step(3, &prompt.Push{After: []string{"a", "b"}, Prompt: "C"})},
		Content: "go"}},
	{"push cwd and worktree", "/push cwd=\"../other dir\" worktree=false \"A\"\n/push worktree=true B", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Push{Cwd: "../other dir", Worktree: ptr(false), Prompt: "A"}), step(2, &prompt.Push{Worktree: ptr(true), Prompt: "B"})}}},
	{"run counts", "/run 2\n/run\nx", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Run{N: 2}), step(2, &prompt.Run{})}, Content: "x"}},
	{"user command with block", "/review {model:opus && loop:2} src/ tests/", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Invoke{Name: "review", Overrides: prompt.Overrides{Model: "opus", Loop: &prompt.Loop{Max: 2}}, Args: "src/ tests/"})}}},
	{"user command without block or args", "/fix\nand explain", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Invoke{Name: "fix"})}, Content: "and explain"}},
	{"user command block without space", "/fix{agent:build}", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Invoke{Name: "fix", Overrides: prompt.Overrides{Agent: "build"}})}}},
	{"built-ins win over command files", "/read x.md", &prompt.Script{Leading: []prompt.Step{step(1, &prompt.Read{Path: "x.md"})}}},
	{"subtask", "/subtask {loop:3 && until:tests pass} fix the tests\nin pkg/a", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Subtask{Overrides: prompt.Overrides{Loop: &prompt.Loop{Max: 3, Until: "tests pass"}}})},
		Content: "fix the tests\nin pkg/a"}},
	{"subtask without a block", "/subtask just do it", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Subtask{})}, Content: "just do it"}},
	{"subtask prompt on the next lines", "/subtask {model:opus}\n\n  do it\nwell", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Subtask{Overrides: prompt.Overrides{Model: "opus"}})}, Content: "  do it\nwell"}},
	{"subtask ends the leading block", "/read spec.md\n/subtask {} x\n/read y.md\nmore\n/push z", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Read{Path: "spec.md"}), step(2, &prompt.Subtask{})},
		Content: "x\n/read y.md\nmore", Trailing: []prompt.Step{step(5, &prompt.Push{Prompt: "z"})}}},
	{"subtask prompt that looks like a command", "/subtask {} /push x", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Subtask{})}, Content: "/push x"}},
	{"subtask block then a brace prompt", `/subtask {} {"json": 1} parse this`, &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Subtask{})}, Content: `{"json": 1} parse this`}},
	{"delegate line", "/delegate \"write the tests\" --agent-type tester --timeout 120\nMeanwhile, refactor.", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Delegate{Task: "write the tests", AgentType: "tester", Timeout: 120 * time.Second})},
		Content: "Meanwhile, refactor."}},
	{"handoff and converge lines", "/handoff 12 --transfer-control\n/converge 12 13 --strategy merge", &prompt.Script{
		Leading: []prompt.Step{
			step(1, &prompt.Handoff{ID: "12", TransferControl: true, Timeout: 600 * time.Second, OnFailure: "escalate"}),
			step(2, &prompt.Converge{IDs: []string{"12", "13"}, Strategy: "merge", ConflictResolution: "manual", OutputFormat: "json"})}}},
	{"same name in leading and trailing blocks", "/push name=a \"x\"\nwork\n/push name=a \"y\"", &prompt.Script{
		Leading: []prompt.Step{step(1, &prompt.Push{Name: "a", Prompt: "x"})}, Content: "work",
		Trailing: []prompt.Step{step(3, &prompt.Push{Name: "a", Prompt: "y"})}}},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompt.Parse(tt.in, userCommands)
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q)\n got\n%s want\n%s", tt.in, dump(got), dump(tt.want))
			}
		})
	}
}

// Ensure a script's String parses back to an equal script.
func TestScript_String(t *testing.T) {
	for _, tt := range parseTests {
		s := tt.want.String()
		got, err := prompt.Parse(s, userCommands)
		if err != nil {
			t.Errorf("%s: Parse(%q) error: %v", tt.name, s, err)
			continue
		}
		if g, w := dump(withoutLines(got)), dump(withoutLines(tt.want)); g != w {
			t.Errorf("%s: Parse(String()) of %q\n got\n%s want\n%s", tt.name, s, g, w)
		}
	}
	s, err := prompt.Parse("/read a b.md\n/push timeout=90 name=x do it\n/subtask {until:done} go\non\n/push y", userCommands)
	if err == nil {
		t.Fatalf("Parse accepted an unquoted path with a blank: %s", dump(s))
	}
	s, _ = prompt.Parse("/read \"a b.md\"\n/push timeout=90 name=x do it\n/subtask {until:done} go\non\n/push y", userCommands)
	want := "/read \"a b.md\"\n/push name=x timeout=1m30s \"do it\"\n/subtask {loop:10 && until:done} go\non\n/push \"y\""
	if got := s.String(); got != want {
		t.Errorf("String()\n got %q\nwant %q", got, want)
	}
}

// withoutLines returns a copy of s with every step on line 0.
func withoutLines(s *prompt.Script) *prompt.Script {
	c := *s
	c.Leading = append([]prompt.Step(nil), s.Leading...)
	c.Trailing = append([]prompt.Step(nil), s.Trailing...)
	for i := range c.Leading {
		c.Leading[i].Line = 0
	}
	for i := range c.Trailing {
		c.Trailing[i].Line = 0
	}
	return &c
}

func TestParse_Errors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"unknown command", "/read a\n/read b\n/pus x", `line 3: "/pus x": unknown command /pus (known: /read, /push, /run, /subtask, /delegate, /handoff, /converge and command files); did you mean /push?`},
		{"unknown command, no guess", "/tmp is full, clean it", `line 1: "/tmp is full, clean it": unknown command /tmp (known: /read, /push, /run, /subtask, /delegate, /handoff, /converge and command files); if the line is text for the agent, reword it so that it does not start with /tmp`},
		{"unknown command in the trailing block", "Do it.\n/etc holds it", `line 2: "/etc holds it": unknown command /etc (known: /read, /push, /run, /subtask, /delegate, /handoff, /converge and command files); if the line is text for the agent, reword it so that it does not start with /etc`},
		{"read after the content", "Do it.\n\n/read x.md", `line 3: "/read x.md": only /push may follow the content; move /read before the content`},
		{"run after the content", "Do it.\n/push a\n/run", `line 3: "/run": only /push may follow the content; move /run before the content`},
		{"command file after the content", "Do it.\n/review src", `line 2: "/review src": only /push may follow the content; move /review before the content`},
		{"agent command", "/check\nwork", "line 1: \"/check\": /check is not a prompt line: an agent runs `taskd check` while it works"},
		{"agent command after content", "work\n/receive", "line 2: \"/receive\": /receive is not a prompt line: an agent runs `taskd receive` while it works"},
		{"push without prompt", "/push", `line 1: "/push": /push needs a prompt: /push name=tests "write the tests"`},
		{"push with only options", "/push name=x model=y", `line 1: "/push name=x model=y": /push needs a prompt: /push name=tests "write the tests"`},
		{"push empty quoted prompt", `/push ""`, `line 1: "/push \"\"": /push needs a prompt: the prompt is empty`},
		{"push bad name", `/push name=a.b "x"`, `line 1: "/push name=a.b \"x\"": name "a.b" is not a name: use 1 to 64 letters, digits, _ or -`},
		{"push long name", "/push name=" + strings.Repeat("a", 65) + " x", `line 1: "/push name=` + strings.Repeat("a", 65) + ` x": name "` + strings.Repeat("a", 65) + `" is not a name: use 1 to 64 letters, digits, _ or -`},
		{"push unknown option", `/push colour=red "x"`, `line 1: "/push colour=red \"x\"": unknown option colour= (known: name=, model=, agent=, timeout=, after=, seq=, cwd=, worktree=); to start the prompt with "colour=", quote the prompt`},
		{"push misspelt option", `/push nmae=x "x"`, `line 1: "/push nmae=x \"x\"": unknown option nmae= (known: name=, model=, agent=, timeout=, after=, seq=, cwd=, worktree=); did you mean name=?`},
		{"push after itself", `/push name=a after=a "x"`, `line 1: "/push name=a after=a \"x\"": after=a names the child itself; a child runs after others`},
		{"push after not a name", `/push after=a,,b "x"`, `line 1: "/push after=a,,b \"x\"": after=a,,b: "" is not the name or id of a child: write after=a or after=a,b (names of 1 to 64 letters, digits, _ or -)`},
		{"push seq not a bool", `/push seq=yes "x"`, `line 1: "/push seq=yes \"x\"": seq= takes true or false, not "yes"`},
		{"push worktree not a bool", `/push worktree=no "x"`, `line 1: "/push worktree=no \"x\"": worktree= takes true or false, not "no"`},
		{"push option twice", `/push name=a name=b "x"`, `line 1: "/push name=a name=b \"x\"": option name= appears twice`},
		{"push bad timeout", `/push timeout=soon "x"`, `line 1: "/push timeout=soon \"x\"": timeout= "soon" is not a duration; write it like 90s or 10m, or as a number of seconds`},
		{"push zero timeout", `/push timeout=0 "x"`, `line 1: "/push timeout=0 \"x\"": timeout= "0" must be more than 0`},
		{"push negative timeout", `/push timeout=-5s "x"`, `line 1: "/push timeout=-5s \"x\"": timeout= "-5s" must be more than 0`},
		{"push huge timeout", `/push timeout=99999999999999 "x"`, `line 1: "/push timeout=99999999999999 \"x\"": timeout= "99999999999999" is too long`},
		{"push model with blank", `/push model="a b" "x"`, `line 1: "/push model=\"a b\" \"x\"": model= needs a value without blanks, not "a b"`},
		{"push empty model", `/push model= "x"`, `line 1: "/push model= \"x\"": model= needs a value without blanks, not ""`},
		{"push unclosed quote", `/push "do it`, `line 1: "/push \"do it": unclosed quote in the prompt: add the closing "`},
		{"push text after the quote", `/push "do" it`, `line 1: "/push \"do\" it": text after the quoted prompt; put all of the prompt inside the quotes (write \" for a quote)`},
		{"push unknown escape", `/push "a\x"`, `line 1: "/push \"a\\x\"": unknown escape \x in the prompt (known: \n, \t, \", \\)`},
		{"push with a block", `/push {model:x} do it`, `line 1: "/push {model:x} do it": /push takes no {…} block: write options as name=, model=, agent=, timeout=, after=, seq=, cwd=, worktree=, or quote a prompt that starts with "{"`},
		{"push glued block", `/push{model:x} do it`, `line 1: "/push{model:x} do it": /push takes no {…} block; only /subtask and command files do`},
		{"trailing push error", "work\n/push name=x", `line 2: "/push name=x": /push needs a prompt: /push name=tests "write the tests"`},
		{"read without file", "/read\nx", `line 1: "/read": /read needs a file: /read path/to/file.md`},
		{"read two files", "/read a.md b.md", `line 1: "/read a.md b.md": the path contains a blank; quote it (/read "my notes.md") or use one /read line per file`},
		{"read text after quote", `/read "a.md" b.md`, `line 1: "/read \"a.md\" b.md": text after the quoted path; /read takes one file (use one /read line per file)`},
		{"read empty quoted", `/read ""`, `line 1: "/read \"\"": /read needs a file: the quoted path is empty`},
		{"run zero", "/run 0", `line 1: "/run 0": /run takes how many queued tasks to start (a whole number ≥ 1), or nothing to start them all; not "0"`},
		{"run word", "/run all", `line 1: "/run all": /run takes how many queued tasks to start (a whole number ≥ 1), or nothing to start them all; not "all"`},
		{"run two numbers", "/run 1 2", `line 1: "/run 1 2": /run takes how many queued tasks to start (a whole number ≥ 1), or nothing to start them all; not "1 2"`},
		{"subtask without prompt", "/read a\n/subtask {loop:3}\n\n", `line 2: "/subtask {loop:3}": /subtask needs a prompt, on its line or the lines after it`},
		{"subtask with only trailing lines", "/subtask {loop:3}\n/push x", `line 1: "/subtask {loop:3}": /subtask needs a prompt, on its line or the lines after it`},
		{"subtask bad block", "/subtask {loop:0} x", `line 1: "/subtask {loop:0} x": loop must be a whole number ≥ 1, not "0"`},
		{"subtask unclosed block", "/subtask {model:x do it", `line 1: "/subtask {model:x do it": unclosed "{": the value of model runs to the end; close the block with "}"`},
		{"command file bad block", "/review {modle:x} src", `line 1: "/review {modle:x} src": unknown key "modle" (known: model, agent, loop, until, untilCommand, return, parallel, as, auto); did you mean model?`},
		{"duplicate names", "/push name=a \"x\"\n\n/push name=a \"y\"\ngo", `line 3: "/push name=a \"y\"": name a is already used by the /push on line 1`},
		{"duplicate trailing names", "go\n/push name=a \"x\"\n/push name=a \"y\"", `line 3: "/push name=a \"y\"": name a is already used by the /push on line 2`},
		{"not UTF-8", "/read a\nDo \xfe it", "line 2: invalid UTF-8 (byte 0xfe); write the text as UTF-8"},
		{"delegate line error", "/delegate fix it", `line 1: "/delegate fix it": /delegate needs --agent-type (builder, tester, analyzer or retriever)`},
		{"delegate unclosed quote", `/delegate "fix it --agent-type builder`, `line 1: "/delegate \"fix it --agent-type builder": unclosed quote in an argument: add the closing "`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := prompt.Parse(tt.in, userCommands)
			var pe *prompt.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) = %s, error %v; want a *prompt.Error", tt.in, dump(s), err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Parse(%q) error\n got %s\nwant %s", tt.in, got, tt.want)
			}
			if pe.Line < 1 {
				t.Errorf("Parse(%q) error has no line", tt.in)
			}
		})
	}
}

// Without ParseOptions.Commands no word is a command file.
func TestParse_NoCommands(t *testing.T) {
	_, err := prompt.Parse("/review src", prompt.ParseOptions{})
	if err == nil || !strings.Contains(err.Error(), "unknown command /review") {
		t.Errorf("Parse(/review) error = %v, want unknown command", err)
	}
}

// ParseOptions.Commands is asked only about words that are not built in.
func TestParse_CommandsAskedOnlyAboutOtherWords(t *testing.T) {
	var asked []string
	opts := prompt.ParseOptions{Commands: func(name string) bool {
		asked = append(asked, name)
		return name == "review"
	}}
	for _, in := range []string{"/read a\n/push x\n/run\n/review src\nwork\n/push y", "/check", "x\n/inbox", "/nope", "/subtask x", "/delegate x --agent-type tester"} {
		_, _ = prompt.Parse(in, opts)
	}
	if want := []string{"review", "nope"}; !reflect.DeepEqual(asked, want) {
		t.Errorf("Commands was asked about %q, want %q", asked, want)
	}
}

// TestParse_LoneSurrogate: a lone surrogate, which a task file may hold,
// is text; bytes that are not UTF-8 at all are refused.
func TestParse_LoneSurrogate(t *testing.T) {
	if _, err := prompt.Parse("/push say \xed\xa0\x80 twice\n\ndo it", prompt.ParseOptions{}); err != nil {
		t.Errorf("Parse with a lone surrogate = %v, want no error", err)
	}
	if _, err := prompt.Parse("/push say \xff\n\ndo it", prompt.ParseOptions{}); err == nil {
		t.Error("Parse with a byte that is not UTF-8 = nil, want an error")
	}
}

func ptr[T any](v T) *T { return &v }
