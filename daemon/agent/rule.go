package agent

import (
	"path/filepath"
	"strings"
)

// Narrow grants. When Claude Code refuses a tool call, the answer that lets
// it go on is a permission rule (its --allowedTools syntax) that allows
// exactly that call and nothing more. The forms below were checked against
// the real CLI (2.1.328):
//
//   - Bash(COMMAND) allows that command as written (spaces, commas and
//     parentheses included, compared exactly). A "*" in a rule is a
//     wildcard, and "\*" does not escape it, so a command with a "*" has
//     no exact rule.
//   - The list --allowedTools takes is split at the commas and spaces
//     outside parentheses, without regard to quotes: a rule whose
//     parentheses do not balance would be cut in two there (a refused
//     command `x),Bash(rm -rf /` must not become the grant of a second
//     rule), so a command or path whose parentheses do not balance, or
//     that escapes one with a backslash, has no exact rule.
//   - Edit(//PATH) allows editing the file at the absolute PATH, and
//     writing it: Claude Code checks the Write tool against Edit rules (a
//     Write(…) rule with a path allows nothing). Read(//PATH) allows
//     reading it. PATH is a gitignore pattern: "//" starts it at the root
//     of the file system, "*", "[" and "]" are escaped with a backslash;
//     a path with "?", a backslash, a line break or white space at its
//     end has no exact rule, because no escape of those works.
//
// Any other tool has no rule narrower than its name.

// ClaudeRule returns the Claude Code permission rule that allows exactly
// the call of tool with input, or "" when there is none narrower than the
// whole tool.
func ClaudeRule(tool string, input map[string]any) string {
	switch tool {
	case "Bash":
		cmd, _ := input["command"].(string)
		if strings.TrimSpace(cmd) == "" || strings.Contains(cmd, "*") || !balanced(cmd) {
			return ""
		}
		return "Bash(" + cmd + ")"
	case "Edit", "Write", "MultiEdit":
		if p := rulePath(input["file_path"]); p != "" {
			return "Edit(/" + p + ")"
		}
	case "Read":
		if p := rulePath(input["file_path"]); p != "" {
			return "Read(/" + p + ")"
		}
	}
	return ""
}

// rulePath returns v, an absolute path, as a gitignore pattern that matches
// it alone, or "" when it cannot be written as one.
func rulePath(v any) string {
	p, _ := v.(string)
	if p == "" || !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.ContainsAny(p, "?\\\n\r\x00") || strings.TrimRight(p, " \t") != p || !balanced(p) {
		return ""
	}
	var b strings.Builder
	for _, r := range p {
		if r == '*' || r == '[' || r == ']' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// balanced reports whether the parentheses of s balance, none of them
// escaped with a backslash.
func balanced(s string) bool {
	if strings.Contains(s, "\\(") || strings.Contains(s, "\\)") {
		return false
	}
	depth := 0
	for _, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			if depth--; depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}
