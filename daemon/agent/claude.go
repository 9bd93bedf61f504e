package agent

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/config"
)

// The claude kind: Claude Code's CLI, claude -p. Its task fields become
// its own flags; its output is a stream of JSON lines (claude-stream,
// claudestream.go) or one JSON object at the end (claude-json); its
// sessions are given their ids up front and continued with --resume.

func init() { Register(claudeKind{}) }

// The output formats of the claude kind.
const (
	OutputClaudeStream = "claude-stream" // claude -p --output-format stream-json --verbose
	OutputClaudeJSON   = "claude-json"   // claude -p --output-format json
)

type claudeKind struct{}

// claudeEnv are the variables the claude profile passes through: its
// credentials, endpoint and settings.
var claudeEnv = []string{"ANTHROPIC_*", "CLAUDE_*", "DISABLE_*", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "NODE_EXTRA_CA_CERTS", "AWS_*", "GOOGLE_*", "CLOUD_ML_REGION", "VERTEX_*"}

func (claudeKind) Config() config.Kind {
	return config.Kind{Name: "claude", Programs: []string{"claude"}, Model: true,
		Profiles: map[string]config.ProfileSpec{
			"claude": {Command: []string{"claude", "-p", "--output-format", "stream-json", "--verbose"}, Prompt: "stdin", Output: OutputClaudeStream, Env: claudeEnv},
		}}
}

func (claudeKind) Formats() []Format {
	return []Format{{Name: OutputClaudeStream, Line: parseClaudeLine}, {Name: OutputClaudeJSON, End: claudeJSONResult}}
}

// claudeJSONResult reads the JSON object claude -p --output-format json
// prints: the last object with a session_id.
func claudeJSONResult(stdout []byte, exitCode int) (Result, bool) {
	obj := LastObject(stdout, func(m map[string]json.RawMessage) bool { _, ok := m["session_id"]; return ok })
	if obj == nil {
		return Result{}, false
	}
	var st Stream
	parseClaudeLine(obj, &st)
	if st.Final == nil {
		return Result{}, false
	}
	return StreamResult(&st, exitCode), true
}

func (claudeKind) Args(argv []string, a *Attempt) []string {
	s := a.Spec
	if s.Model != "" {
		argv = append(argv, "--model", s.Model)
	}
	if s.PermissionMode != "" {
		argv = append(argv, "--permission-mode", s.PermissionMode)
	}
	if len(s.Tools) > 0 {
		argv = append(argv, "--allowedTools", strings.Join(s.Tools, ","))
	}
	if len(s.DisallowTools) > 0 {
		argv = append(argv, "--disallowedTools", strings.Join(s.DisallowTools, ","))
	}
	if s.SystemPrompt != "" {
		argv = append(argv, "--append-system-prompt", s.SystemPrompt)
	}
	if a.Budget.MaxTurns > 0 {
		argv = append(argv, "--max-turns", strconv.Itoa(a.Budget.MaxTurns))
	}
	if a.Budget.MaxCostUSD > 0 && a.Profile.Output == OutputClaudeStream {
		// Each model call's real output and whether a tool call
		// follows, before the next call is made (Budget.passed).
		argv = append(argv, "--include-partial-messages")
	}
	if a.Resume != "" {
		argv = append(argv, "--resume", a.Resume)
		if a.Fork {
			argv = append(argv, "--fork-session")
		}
	} else if a.Session != "" {
		argv = append(argv, "--session-id", a.Session)
	}
	return endOptions(argv, a)
}

func (claudeKind) BoundsTurns() bool { return true }

func (claudeKind) Sessions() Sessions { return claudeSessions{} }

func (claudeKind) Limit(st *Stream, texts []string, now time.Time) *Limit {
	return FindLimit(st, texts, now)
}

func (claudeKind) CredentialsFix(docs string) string {
	return "give the service ANTHROPIC_API_KEY: put ANTHROPIC_API_KEY=… in ~/.config/taskd/env (mode 600), load it with EnvironmentFile=-%h/.config/taskd/env in 'systemctl --user edit taskd', restart the service (" + docs + "); or log in as this user with 'claude /login'"
}

// CountTools counts the tool calls of the session's transcript
// (claudetools.go).
func (claudeKind) CountTools(env []string, session string, since time.Time) (int, bool) {
	return countToolUses(claudeConfigDir(env), session, since)
}

// claudeSessions: each new session is given its id up front
// (--session-id), and one is continued (--resume) once its transcript is
// found where Claude Code keeps it: projects/<cwd>/<session>.jsonl in its
// configuration directory.
type claudeSessions struct{}

func (claudeSessions) NewID() string { return NewSessionID() }

func (claudeSessions) Kept(a *Attempt, session string) bool {
	dir := claudeConfigDir(a.profileEnv("HOME", "CLAUDE_CONFIG_DIR"))
	if dir == "" {
		return false
	}
	found, _ := filepath.Glob(filepath.Join(dir, "projects", "*", session+".jsonl"))
	return len(found) > 0
}
