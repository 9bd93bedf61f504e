package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Ensure tool uses are counted from a session transcript: assistant lines
// only, each tool_use id once, nothing written before the attempt began.
func TestCountToolUses(t *testing.T) {
	since := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		lines []string
		want  int
	}{
		{"none", []string{
			`{"type":"user","timestamp":"2026-01-02T10:00:01Z","message":{"content":"hi"}}`,
			`{"type":"assistant","timestamp":"2026-01-02T10:00:02Z","message":{"content":[{"type":"text","text":"hello"}]}}`,
		}, 0},
		{"two in one message", []string{
			`{"type":"assistant","timestamp":"2026-01-02T10:00:02Z","message":{"content":[{"type":"tool_use","id":"a"},{"type":"tool_use","id":"b"}]}}`,
		}, 2},
		{"one message over two lines", []string{
			`{"type":"assistant","timestamp":"2026-01-02T10:00:02Z","message":{"content":[{"type":"tool_use","id":"a"}]}}`,
			`{"type":"assistant","timestamp":"2026-01-02T10:00:02Z","message":{"content":[{"type":"tool_use","id":"a"}]}}`,
			`{"type":"user","timestamp":"2026-01-02T10:00:03Z","message":{"content":[{"type":"tool_result","tool_use_id":"a"}]}}`,
		}, 1},
		{"earlier attempt left out", []string{
			`{"type":"assistant","timestamp":"2026-01-02T09:59:59Z","message":{"content":[{"type":"tool_use","id":"old"}]}}`,
			`{"type":"assistant","timestamp":"2026-01-02T10:00:05Z","message":{"content":[{"type":"tool_use","id":"new"}]}}`,
		}, 1},
		{"bad lines skipped", []string{
			`not json`,
			`{"type":"assistant","message":{"content":"text only"}}`,
			`{"type":"assistant","timestamp":"2026-01-02T10:00:05Z","message":{"content":[{"type":"tool_use","id":"x"}]}}`,
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			project := filepath.Join(dir, "projects", "-work-repo")
			if err := os.MkdirAll(project, 0o755); err != nil {
				t.Fatal(err)
			}
			session := "0b9e1a52-7c1d-4c55-9f0e-1f2a3b4c5d6e"
			if err := os.WriteFile(filepath.Join(project, session+".jsonl"), []byte(strings.Join(tt.lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			got, ok := countToolUses(dir, session, since)
			if !ok || got != tt.want {
				t.Errorf("countToolUses = %d, %v; want %d, true", got, ok, tt.want)
			}
		})
	}
}

// Ensure no count is made up: a missing transcript, or a session id that is
// not a plain name, gives none.
func TestCountToolUses_Unknown(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "projects", "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "projects", "p", "x.jsonl"), []byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a"}]}}`+"\n"), 0o644)
	for _, session := range []string{"missing", "*", "../p/x", ""} {
		if n, ok := countToolUses(dir, session, time.Time{}); ok {
			t.Errorf("session %q: counted %d", session, n)
		}
	}
	if n, ok := countToolUses(dir, "x", time.Time{}); !ok || n != 1 {
		t.Errorf("session x: %d, %v; want 1, true", n, ok)
	}
}

func TestClaudeConfigDir(t *testing.T) {
	tests := []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/h"}, "/h/.claude"},
		{[]string{"HOME=/h", "CLAUDE_CONFIG_DIR=/c"}, "/c"},
		{[]string{"CLAUDE_CONFIG_DIR=", "HOME=/h"}, "/h/.claude"},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := claudeConfigDir(tt.env); got != tt.want {
			t.Errorf("claudeConfigDir(%q) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

// Ensure an agent's own count in its result object is recorded, and a
// negative or missing one is not.
func TestParseResult_ToolInvocationCount(t *testing.T) {
	tests := []struct {
		stdout string
		want   int // -1: none
	}{
		{`{"success": true, "tool_invocation_count": 3}`, 3},
		{`{"success": true, "tool_invocation_count": 0}`, 0},
		{`{"success": true, "tool_invocation_count": -2}`, -1},
		{`{"success": true}`, -1},
		{`done`, -1},
	}
	for _, tt := range tests {
		r := ParseResult("text", []byte(tt.stdout), 0)
		got := -1
		if r.ToolInvocations != nil {
			got = *r.ToolInvocations
		}
		if got != tt.want {
			t.Errorf("parseResult(%q): tool count %d, want %d", tt.stdout, got, tt.want)
		}
	}
}
