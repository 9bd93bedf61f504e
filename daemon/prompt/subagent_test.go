package prompt_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/prompt"
)

// aceLine parses one prompt line and returns its command.
func aceLine(t *testing.T, line string) (prompt.Command, error) {
	t.Helper()
	s, err := prompt.Parse(line, prompt.ParseOptions{})
	if err != nil {
		return nil, err
	}
	if len(s.Leading) != 1 || s.Content != "" {
		t.Fatalf("Parse(%q) = %s, want one leading step", line, dump(s))
	}
	return s.Leading[0].Cmd, nil
}

func TestParseDelegate(t *testing.T) {
	tests := []struct {
		name string
		args []string // CLI arguments
		line string   // the same as a prompt line
		want *prompt.Delegate
	}{
		{"defaults", []string{"write", "the", "tests", "--agent-type", "tester"},
			`/delegate write the tests --agent-type tester`,
			&prompt.Delegate{Task: "write the tests", AgentType: "tester", Timeout: 300 * time.Second}},
		{"quoted task", []string{"write the tests", "--agent-type=builder"},
			`/delegate "write the tests" --agent-type=builder`,
			&prompt.Delegate{Task: "write the tests", AgentType: "builder", Timeout: 300 * time.Second}},
		{"every flag", []string{"fix it", "--agent-type", "analyzer", "--inherit-context", "--permission-mode", "acceptEdits", "--timeout", "90", "--tools", "Read,Grep, Bash(git log:*)"},
			`/delegate 'fix it' --agent-type analyzer --inherit-context --permission-mode acceptEdits --timeout 90 --tools "Read,Grep, Bash(git log:*)"`,
			&prompt.Delegate{Task: "fix it", AgentType: "analyzer", InheritContext: true, PermissionMode: "acceptEdits",
				Timeout: 90 * time.Second, Tools: []string{"Read", "Grep", "Bash(git log:*)"}}},
		{"flags in another order, single dashes, = forms", []string{"look", "-tools=WebFetch", "-timeout=2m", "-permission-mode=plan", "-agent-type=retriever", "-inherit-context=false"},
			`/delegate look -tools=WebFetch -timeout=2m -permission-mode=plan -agent-type=retriever -inherit-context=false`,
			&prompt.Delegate{Task: "look", AgentType: "retriever", PermissionMode: "plan", Timeout: 2 * time.Minute, Tools: []string{"WebFetch"}}},
		{"bypass is parsed; the daemon decides", []string{"x", "--agent-type", "builder", "--permission-mode", "bypassPermissions"},
			`/delegate x --agent-type builder --permission-mode bypassPermissions`,
			&prompt.Delegate{Task: "x", AgentType: "builder", PermissionMode: "bypassPermissions", Timeout: 300 * time.Second}},
		{"task with dashes and escapes", []string{"use --force, then -5 more", "--agent-type", "builder"},
			`/delegate "use --force, then" -5 more --agent-type builder`,
			&prompt.Delegate{Task: "use --force, then -5 more", AgentType: "builder", Timeout: 300 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompt.ParseDelegateArgs(tt.args)
			if err != nil {
				t.Fatalf("ParseDelegateArgs(%q) error: %v", tt.args, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseDelegateArgs(%q) = %#v, want %#v", tt.args, got, tt.want)
			}
			cmd, err := aceLine(t, tt.line)
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tt.line, err)
			}
			if !reflect.DeepEqual(cmd, tt.want) {
				t.Errorf("Parse(%q) = %#v, want %#v", tt.line, cmd, tt.want)
			}
			again, err := aceLine(t, tt.want.String())
			if err != nil || !reflect.DeepEqual(again, tt.want) {
				t.Errorf("Parse(String()) of %q = %#v, %v; want %#v", tt.want.String(), again, err, tt.want)
			}
		})
	}
}

func TestParseHandoff(t *testing.T) {
	tests := []struct {
		name string
		args []string
		line string
		want *prompt.Handoff
	}{
		{"defaults", []string{"12"}, "/handoff 12", &prompt.Handoff{ID: "12", Timeout: 600 * time.Second, OnFailure: "escalate"}},
		{"every flag", []string{"research-a", "--transfer-control", "--timeout", "30s", "--on-failure", "retry"},
			"/handoff research-a --transfer-control --timeout 30s --on-failure retry",
			&prompt.Handoff{ID: "research-a", TransferControl: true, Timeout: 30 * time.Second, OnFailure: "retry"}},
		{"abort", []string{"7", "--on-failure=abort", "--transfer-control=true"}, "/handoff 7 --on-failure=abort --transfer-control=true",
			&prompt.Handoff{ID: "7", TransferControl: true, Timeout: 600 * time.Second, OnFailure: "abort"}},
		{"an id that starts with a dash, quoted", nil, `/handoff "-x"`, &prompt.Handoff{ID: "-x", Timeout: 600 * time.Second, OnFailure: "escalate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.args != nil {
				got, err := prompt.ParseHandoffArgs(tt.args)
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Errorf("ParseHandoffArgs(%q) = %#v, %v; want %#v", tt.args, got, err, tt.want)
				}
			}
			cmd, err := aceLine(t, tt.line)
			if err != nil || !reflect.DeepEqual(cmd, tt.want) {
				t.Errorf("Parse(%q) = %#v, %v; want %#v", tt.line, cmd, err, tt.want)
			}
			again, err := aceLine(t, tt.want.String())
			if err != nil || !reflect.DeepEqual(again, tt.want) {
				t.Errorf("Parse(String()) of %q = %#v, %v; want %#v", tt.want.String(), again, err, tt.want)
			}
		})
	}
}

func TestParseConverge(t *testing.T) {
	tests := []struct {
		name string
		args []string
		line string
		want *prompt.Converge
	}{
		{"defaults", []string{"12", "13", "--strategy", "merge"}, "/converge 12 13 --strategy merge",
			&prompt.Converge{IDs: []string{"12", "13"}, Strategy: "merge", ConflictResolution: "manual", OutputFormat: "json"}},
		{"every flag", []string{"a", "b", "c", "--strategy=vote", "--conflict-resolution", "prefer_higher_confidence", "--output-format", "delta_batch"},
			"/converge a b c --strategy=vote --conflict-resolution prefer_higher_confidence --output-format delta_batch",
			&prompt.Converge{IDs: []string{"a", "b", "c"}, Strategy: "vote", ConflictResolution: "prefer_higher_confidence", OutputFormat: "delta_batch"}},
		{"first success, markdown", []string{"1", "2", "--output-format", "markdown", "--strategy", "first_success", "--conflict-resolution", "auto_accept_latest"},
			"/converge 1 2 --output-format markdown --strategy first_success --conflict-resolution auto_accept_latest",
			&prompt.Converge{IDs: []string{"1", "2"}, Strategy: "first_success", ConflictResolution: "auto_accept_latest", OutputFormat: "markdown"}},
		{"consensus", []string{"1", "2", "--strategy", "consensus"}, "/converge 1 2 --strategy consensus",
			&prompt.Converge{IDs: []string{"1", "2"}, Strategy: "consensus", ConflictResolution: "manual", OutputFormat: "json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompt.ParseConvergeArgs(tt.args)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseConvergeArgs(%q) = %#v, %v; want %#v", tt.args, got, err, tt.want)
			}
			cmd, err := aceLine(t, tt.line)
			if err != nil || !reflect.DeepEqual(cmd, tt.want) {
				t.Errorf("Parse(%q) = %#v, %v; want %#v", tt.line, cmd, err, tt.want)
			}
			again, err := aceLine(t, tt.want.String())
			if err != nil || !reflect.DeepEqual(again, tt.want) {
				t.Errorf("Parse(String()) of %q = %#v, %v; want %#v", tt.want.String(), again, err, tt.want)
			}
		})
	}
}

func TestParseACE_Errors(t *testing.T) {
	tests := []struct {
		name  string
		parse func([]string) error
		args  string // split on spaces
		want  string
	}{
		{"delegate without agent type", delegate, "fix it", "/delegate needs --agent-type (builder, tester, analyzer or retriever)"},
		{"delegate without task", delegate, "--agent-type builder", `/delegate needs a task: /delegate "write the tests" --agent-type tester`},
		{"delegate bad agent type", delegate, "x --agent-type buildr", `--agent-type must be builder, tester, analyzer or retriever, not "buildr"; did you mean builder?`},
		{"delegate reviewer is not a type", delegate, "x --agent-type reviewer", `--agent-type must be builder, tester, analyzer or retriever, not "reviewer"`},
		{"delegate agent type without value", delegate, "x --agent-type", "flag --agent-type needs a value (builder, tester, analyzer or retriever)"},
		{"delegate value is a flag", delegate, "x --agent-type --inherit-context", "flag --agent-type needs a value (builder, tester, analyzer or retriever)"},
		{"delegate empty = value", delegate, "x --agent-type=", "flag --agent-type needs a value (builder, tester, analyzer or retriever)"},
		{"delegate unknown flag", delegate, "x --agent-type builder --force", "unknown flag --force for /delegate (known: --agent-type, --inherit-context, --permission-mode, --timeout, --tools)"},
		{"delegate misspelt flag", delegate, "x --agent-typ builder", "unknown flag --agent-typ for /delegate (known: --agent-type, --inherit-context, --permission-mode, --timeout, --tools); did you mean --agent-type?"},
		{"delegate flag twice", delegate, "x --agent-type builder --agent-type tester", "flag --agent-type appears twice"},
		{"delegate bad permission mode", delegate, "x --agent-type builder --permission-mode yolo", `--permission-mode must be plan, acceptEdits or bypassPermissions, not "yolo"`},
		{"delegate bad timeout", delegate, "x --agent-type builder --timeout soon", `--timeout "soon" is not a duration; write it like 90s or 10m, or as a number of seconds`},
		{"delegate zero timeout", delegate, "x --agent-type builder --timeout 0", `--timeout "0" must be more than 0`},
		{"delegate empty tool", delegate, "x --agent-type builder --tools Read,,Grep", `--tools "Read,,Grep" has an empty tool name; write --tools Read,Grep`},
		{"delegate repeated tool", delegate, "x --agent-type builder --tools Read,Read", "--tools names Read twice"},
		{"delegate bool with a value", delegate, "x --agent-type builder --inherit-context=yes", `flag --inherit-context takes no value (or =true, =false), not "yes"`},
		{"delegate words after the flags", delegate, "x --agent-type builder and more", `unexpected "and" after the flags: /delegate takes its task before the flags (quote text that contains --)`},
		{"handoff without id", handoff, "--transfer-control", "/handoff takes one task id, not 0: /handoff 12 --transfer-control"},
		{"handoff two ids", handoff, "1 2", "/handoff takes one task id, not 2: /handoff 12 --transfer-control"},
		{"handoff bad id", handoff, "a.b", `"a.b" is not a task id: use letters, digits, _ or -`},
		{"handoff bad on-failure", handoff, "1 --on-failure ignore", `--on-failure must be retry, abort or escalate, not "ignore"`},
		{"handoff bad timeout", handoff, "1 --timeout -1s", `--timeout "-1s" must be more than 0`},
		{"handoff flag of another command", handoff, "1 --strategy merge", "unknown flag --strategy for /handoff (known: --transfer-control, --timeout, --on-failure)"},
		{"converge one id", converge, "1 --strategy merge", "/converge needs at least 2 task ids, not 1: /converge 12 13 --strategy merge"},
		{"converge repeated id", converge, "1 1 --strategy merge", "task 1 is named twice"},
		{"converge without strategy", converge, "1 2", "/converge needs --strategy (merge, vote, consensus or first_success)"},
		{"converge bad strategy", converge, "1 2 --strategy best", `--strategy must be merge, vote, consensus or first_success, not "best"`},
		{"converge vote with two", converge, "1 2 --strategy vote", "--strategy vote needs at least 3 task ids to have a majority, not 2"},
		{"converge bad resolution", converge, "1 2 --strategy merge --conflict-resolution newest", `--conflict-resolution must be manual, auto_accept_latest or prefer_higher_confidence, not "newest"`},
		{"converge bad format", converge, "1 2 --strategy merge --output-format yaml", `--output-format must be json, markdown or delta_batch, not "yaml"`},
		{"converge ids after flags", converge, "1 --strategy merge 2", `unexpected "2" after the flags: /converge takes its task ids before the flags (quote text that contains --)`},
		{"not UTF-8", delegate, "x\x80 --agent-type builder", `"x\x80": invalid UTF-8 (byte 0x80); write the text as UTF-8`},
		{"converge bad id", converge, "1 x/y --strategy merge", `"x/y" is not a task id: use letters, digits, _ or -`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.parse(strings.Fields(tt.args))
			var pe *prompt.Error
			if !errors.As(err, &pe) {
				t.Fatalf("parse(%q) error = %v, want a *prompt.Error", tt.args, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("parse(%q) error\n got %s\nwant %s", tt.args, got, tt.want)
			}
			if pe.Line != 0 {
				t.Errorf("argument error has line %d, want 0", pe.Line)
			}
		})
	}
}

func delegate(args []string) error { _, err := prompt.ParseDelegateArgs(args); return err }
func handoff(args []string) error  { _, err := prompt.ParseHandoffArgs(args); return err }
func converge(args []string) error { _, err := prompt.ParseConvergeArgs(args); return err }

// Prompt lines are split like a shell splits them.
func TestParseACE_Quoting(t *testing.T) {
	tests := []struct{ line, task string }{
		{`/delegate "a \"quoted\" word" --agent-type tester`, `a "quoted" word`},
		{`/delegate 'single $quotes \n kept' --agent-type tester`, `single $quotes \n kept`},
		{`/delegate back\ slash\"es --agent-type tester`, `back slash"es`},
		{`/delegate "two\nlines" --agent-type tester`, "two\nlines"},
		{`/delegate "--agent-type builder" --agent-type tester`, "--agent-type builder"},
		{`/delegate a""b  c --agent-type tester`, "ab c"},
	}
	for _, tt := range tests {
		cmd, err := aceLine(t, tt.line)
		if err != nil {
			t.Errorf("Parse(%q) error: %v", tt.line, err)
			continue
		}
		if got := cmd.(*prompt.Delegate).Task; got != tt.task {
			t.Errorf("Parse(%q) task = %q, want %q", tt.line, got, tt.task)
		}
	}
	for line, want := range map[string]string{
		`/delegate 'open --agent-type tester`:               `line 1: "/delegate 'open --agent-type tester": unclosed ' in an argument: add the closing '`,
		`/delegate x --agent-type tester \`:                 `line 1: "/delegate x --agent-type tester \\": the line ends with a lone \`,
		`/delegate "a\q" --agent-type tester`:               `line 1: "/delegate \"a\\q\" --agent-type tester": unknown escape \q in an argument (known: \n, \t, \", \\)`,
		`/converge{x} 1 2 --strategy merge`:                 `line 1: "/converge{x} 1 2 --strategy merge": /converge takes no {…} block; only /subtask and command files do`,
		"/handoff 12 --on-failure retry\nwork\n/handoff 13": `line 3: "/handoff 13": only /push may follow the content; move /handoff before the content`,
	} {
		_, err := prompt.Parse(line, prompt.ParseOptions{})
		if err == nil || err.Error() != want {
			t.Errorf("Parse(%q) error\n got %v\nwant %s", line, err, want)
		}
	}
}
