package agent

import (
	"encoding/json"
	"strings"
	"time"
)

// An agent that streams JSON events (claude's stream-json, codex exec
// --json, opencode run --format json) is read as it runs: every line of
// its stdout.log is parsed into a Stream, what it has said so far, and
// rendered into transcript.log for people. docs/agents.md describes the
// formats and what taskd takes from each.

// The output kinds of a profile (config.Profile.Output) that are streams.
const (
	OutputClaudeStream = "claude-stream" // claude -p --output-format stream-json --verbose
	OutputCodexJSON    = "codex-json"    // codex exec --json
	OutputOpencodeJSON = "opencode-json" // opencode run --format json
)

// IsStream reports whether output names a streamed format.
func IsStream(output string) bool { return parserFor(output) != nil }

// A Stream is what an agent's streamed output has said so far.
type Stream struct {
	SessionID string
	Model     string
	// Turns counts the agent's calls of its model: distinct assistant
	// messages (claude), turns (codex), steps (opencode).
	Turns    int
	LastTool string // the last tool called, with its target: "Edit src/x.go"
	Tokens   Tokens
	// CostUSD is the cost so far: the agent's own figure when it gives
	// one (CostKnown), else estimated from the tokens (pricing.go).
	CostUSD   float64
	CostKnown bool
	Text      string   // the agent's last text
	Denials   []Denial // tool calls the agent was refused
	Errors    []string // errors the agent reported
	// Trouble is the last thing the agent reported going wrong since its
	// model last answered (an API error, a retry of a call that failed),
	// in words; "" once a model call succeeds after it. A timed-out
	// attempt's error quotes it (ending).
	Trouble string
	// Asking is set while the agent waits for its model's answer: after it
	// began, and after each tool result, until the next answer.
	Asking bool
	// LastTurnUSD is the cost of the agent's last model call, as far as
	// the stream shows it; MoreTurns is set when that call asked for a
	// tool, so that another call follows once the tool has run. A cost
	// budget stops the agent before that call when it would pass the
	// budget (Budget.passed).
	LastTurnUSD float64
	MoreTurns   bool
	// Limit is set when the agent reported a usage limit (limit.go).
	Limit *Limit
	// Final is the stream's closing record (claude's result line, codex's
	// turn.completed or turn.failed, opencode's last step), once seen.
	Final *Final

	messages map[string]bool   // assistant message ids counted in Turns
	last     lastCall          // the last model call, as counted so far
	tools    map[string]Denial // tool calls by id (their targets and rules), for denials that name only the id
	estimate float64           // the estimated cost of the tokens so far
}

// Tokens counts the tokens of an agent's model calls.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead,omitempty"`
	CacheWrite int64 `json:"cacheWrite,omitempty"`
}

// A Denial is a tool call the agent was not allowed to make.
type Denial struct {
	Tool   string `json:"tool"`
	Target string `json:"target,omitempty"` // the file, command or pattern it was for
	// Rule is the permission rule that allows exactly this call (claude:
	// rule.go), or "" when no rule narrower than the whole tool does.
	Rule string `json:"rule,omitempty"`
}

// Final is how a streamed run says it ended.
type Final struct {
	IsError   bool
	Subtype   string // claude: success, error_max_turns, error_during_execution, …
	Text      string // the final text (claude's result field)
	Turns     int    // the agent's own count, if it gives one
	APIStatus int    // the HTTP status of an API error that ended it
}

// countTurn counts assistant message id once; an empty id always counts.
func (s *Stream) countTurn(id string) {
	if id != "" {
		if s.messages == nil {
			s.messages = map[string]bool{}
		}
		if s.messages[id] {
			return
		}
		s.messages[id] = true
	}
	s.Turns++
	s.Trouble = "" // its model answered
}

// addTokens adds the tokens of one model call of model, and their
// estimated cost unless the agent reports its own.
func (s *Stream) addTokens(model string, t Tokens) {
	s.Tokens.Input += t.Input
	s.Tokens.Output += t.Output
	s.Tokens.CacheRead += t.CacheRead
	s.Tokens.CacheWrite += t.CacheWrite
	s.estimate += estimateCost(model, t)
	if !s.CostKnown {
		s.CostUSD = s.estimate
	}
}

// setCost records a cost the agent reports itself: total, or added to
// what it reported before.
func (s *Stream) setCost(usd float64, add bool) {
	if add && s.CostKnown {
		usd += s.CostUSD
	}
	s.CostUSD, s.CostKnown = usd, true
}

// rememberTool keeps tool call id: its tool, target and rule.
func (s *Stream) rememberTool(id string, call Denial) {
	if id == "" {
		return
	}
	if s.tools == nil {
		s.tools = map[string]Denial{}
	}
	s.tools[id] = call
}

func (s *Stream) addDenial(d Denial) {
	for _, have := range s.Denials {
		if have == d {
			return
		}
	}
	s.Denials = append(s.Denials, d)
}

func (s *Stream) addError(msg string) {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return
	}
	if len(s.Errors) < 20 {
		s.Errors = append(s.Errors, msg)
	}
	s.Trouble = oneLine(msg, 300)
}

// A lastCall is the model call a stream reported last: its message id,
// model and tokens counted so far.
type lastCall struct {
	id, model string
	tokens    Tokens
}

// countCall counts a model call's tokens t, once per message id (an empty
// id always counts), as the call it reported last; the call's cost is
// LastTurnUSD. A later report of the same call with more output tokens
// (claude's message_delta) adds the difference.
func (s *Stream) countCall(id, model string, t Tokens) {
	if id != "" && id == s.last.id {
		if t.Output > s.last.tokens.Output {
			s.addTokens(model, Tokens{Output: t.Output - s.last.tokens.Output})
			s.last.tokens.Output = t.Output
		}
	} else {
		s.last = lastCall{id: id, model: model, tokens: t}
		s.addTokens(model, t)
	}
	s.LastTurnUSD = estimateCost(s.last.model, s.last.tokens)
}

// A streamParser reads one format: each line updates the Stream and
// returns what the transcript shows of it.
type streamParser func(line []byte, s *Stream) []string

func parserFor(output string) streamParser {
	switch output {
	case OutputClaudeStream:
		return parseClaudeLine
	case OutputCodexJSON:
		return parseCodexLine
	case OutputOpencodeJSON:
		return parseOpencodeLine
	}
	return nil
}

// Progress is what metadata.taskd.progress records of a running
// attempt: how far its agent is, what it last did, what it has cost.
type Progress struct {
	Attempt   int       `json:"attempt"`
	Turns     int       `json:"turns"`
	LastTool  string    `json:"lastTool,omitempty"`
	Tokens    Tokens    `json:"tokens"`
	CostUSD   float64   `json:"costUsd"`
	Estimated bool      `json:"costEstimated,omitempty"` // CostUSD is taskd's estimate, not the agent's figure
	SessionID string    `json:"sessionId,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Progress is s as metadata.taskd.progress records it.
func (s *Stream) Progress(attempt int, now time.Time) Progress {
	return Progress{Attempt: attempt, Turns: s.Turns, LastTool: s.LastTool, Tokens: s.Tokens,
		CostUSD: roundCost(s.CostUSD), Estimated: !s.CostKnown && s.CostUSD > 0, SessionID: s.SessionID, UpdatedAt: now.UTC()}
}

// roundCost keeps a cost to a hundredth of a cent's precision.
func roundCost(usd float64) float64 {
	return float64(int64(usd*1e6+0.5)) / 1e6
}

// jsonLine decodes one line of a stream into v; lines that are not JSON
// objects (a warning printed on stdout) report false.
func jsonLine(line []byte, v any) bool {
	line = []byte(strings.TrimSpace(string(line)))
	return len(line) > 0 && line[0] == '{' && json.Unmarshal(line, v) == nil
}

// toolTarget says what a tool call is for, from its input: the file,
// the command, the pattern or the address.
func toolTarget(input map[string]any) string {
	for _, k := range []string{"file_path", "filePath", "path", "notebook_path", "command", "cmd", "pattern", "url", "query", "description", "prompt"} {
		if v, ok := input[k]; ok {
			switch v := v.(type) {
			case string:
				return oneLine(v, 120)
			case []any: // codex: a command as argv
				parts := make([]string, 0, len(v))
				for _, p := range v {
					if s, ok := p.(string); ok {
						parts = append(parts, s)
					}
				}
				return oneLine(strings.Join(parts, " "), 120)
			}
		}
	}
	return ""
}

// toolLabel is a tool call as the transcript and progress show it.
func toolLabel(name, target string) string {
	if target == "" {
		return name
	}
	return name + " " + target
}

// oneLine is s on one line, at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	return Truncate(s, n)
}
