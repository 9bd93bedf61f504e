package agent

import "testing"

// TestClaudeRule: the rule that allows exactly one refused call, in the
// forms the real Claude Code CLI accepts (rule.go), and none where no
// rule is narrower than the whole tool or a rule would grant more than
// the call.
func TestClaudeRule(t *testing.T) {
	tests := []struct {
		name  string
		tool  string
		input map[string]any
		want  string
	}{
		{"a command", "Bash", map[string]any{"command": "python3 test_calc.py", "description": "run the tests"}, "Bash(python3 test_calc.py)"},
		{"commas and balanced parentheses", "Bash", map[string]any{"command": "python3 t.py a,b (x)"}, "Bash(python3 t.py a,b (x))"},
		{"a compound command", "Bash", map[string]any{"command": "cd sub && make test"}, "Bash(cd sub && make test)"},
		{"a wildcard would match more", "Bash", map[string]any{"command": "rm -rf *"}, ""},
		{"a prefix rule would match more", "Bash", map[string]any{"command": "npm run:*"}, ""},
		{"a parenthesis that would end the rule", "Bash", map[string]any{"command": "x),Bash(rm -rf /"}, ""},
		{"an unbalanced parenthesis", "Bash", map[string]any{"command": `echo ")"`}, ""},
		{"an escaped parenthesis", "Bash", map[string]any{"command": `echo \( ) , Bash(rm)`}, ""},
		{"no command", "Bash", map[string]any{"description": "nothing"}, ""},
		{"a blank command", "Bash", map[string]any{"command": "  "}, ""},
		{"an edit", "Edit", map[string]any{"file_path": "/src/calc.py", "old_string": "a", "new_string": "b"}, "Edit(//src/calc.py)"},
		{"a write is an edit rule", "Write", map[string]any{"file_path": "/src/new.py", "content": "x"}, "Edit(//src/new.py)"},
		{"a read", "Read", map[string]any{"file_path": "/etc/hosts"}, "Read(//etc/hosts)"},
		{"gitignore characters escaped", "Write", map[string]any{"file_path": "/p/x[1]*.txt"}, `Edit(//p/x\[1\]\*.txt)`},
		{"spaces, commas and parentheses kept", "Write", map[string]any{"file_path": "/p/a b,c (1).txt"}, "Edit(//p/a b,c (1).txt)"},
		{"a question mark matches any character", "Write", map[string]any{"file_path": "/p/q?.txt"}, ""},
		{"a backslash", "Write", map[string]any{"file_path": `/p/a\b`}, ""},
		{"a space at the end", "Write", map[string]any{"file_path": "/p/a "}, ""},
		{"a relative path", "Edit", map[string]any{"file_path": "calc.py"}, ""},
		{"an unclean path", "Edit", map[string]any{"file_path": "/p/../etc/passwd"}, ""},
		{"an unbalanced path", "Edit", map[string]any{"file_path": "/p/x)"}, ""},
		{"a path that is not text", "Edit", map[string]any{"file_path": 7}, ""},
		{"another tool", "WebFetch", map[string]any{"url": "https://example.com"}, ""},
		{"an MCP tool", "mcp__srv__do", map[string]any{"x": "y"}, ""},
	}
	for _, tt := range tests {
		if got := ClaudeRule(tt.tool, tt.input); got != tt.want {
			t.Errorf("%s: ClaudeRule(%s, %v) = %q, want %q", tt.name, tt.tool, tt.input, got, tt.want)
		}
	}
}

// TestClaudeStream_DenialRules: a refused call read from claude's stream
// carries its rule, from the denial the result lists and from the one the
// stream reports by its tool call's id alike, and the two are one denial.
func TestClaudeStream_DenialRules(t *testing.T) {
	var s Stream
	lines := []string{
		`{"type":"assistant","session_id":"s","message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"python3 test_calc.py"}}]}}`,
		`{"type":"system","subtype":"permission_denied","session_id":"s","tool_name":"Bash","tool_use_id":"toolu_1","message":"refused"}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"could not run it","session_id":"s","permission_denials":[{"tool_name":"Bash","tool_use_id":"toolu_1","tool_input":{"command":"python3 test_calc.py"}}]}`,
	}
	for _, l := range lines {
		parseClaudeLine([]byte(l), &s)
	}
	want := Denial{Tool: "Bash", Target: "python3 test_calc.py", Rule: "Bash(python3 test_calc.py)"}
	if len(s.Denials) != 1 || s.Denials[0] != want {
		t.Errorf("denials %+v, want [%+v]", s.Denials, want)
	}
}
