package agent

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// claude -p --output-format stream-json --verbose prints one JSON object a
// line: a system init line (session, model, cwd, tools), the assistant's
// messages (one line per content block: text, tool_use), the tool results
// (user lines), system lines for denied permissions and API retries,
// rate_limit_event lines, and a closing result line with the final text,
// the cost, the turns and the denied tool calls.

type claudeLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
	Cwd       string `json:"cwd"`
	// Message is the assistant's or user's message (an object), or a
	// system line's text (permission_denied).
	Message json.RawMessage `json:"message"`
	// An assistant line that is an API error, and a system api_retry
	// line, name the error: "rate_limit", …
	Error string `json:"error"`

	// system, subtype permission_denied
	ToolName  string `json:"tool_name"`
	ToolUseID string `json:"tool_use_id"`
	// system, subtype api_retry
	Attempt      int   `json:"attempt"`
	MaxRetries   int   `json:"max_retries"`
	RetryDelayMs int64 `json:"retry_delay_ms"`
	ErrorStatus  int   `json:"error_status"`
	// rate_limit_event
	RateLimit *struct {
		Status        string `json:"status"`
		ResetsAt      int64  `json:"resetsAt"`
		RateLimitType string `json:"rateLimitType"`
	} `json:"rate_limit_info"`
	// stream_event (--include-partial-messages): the API's own events
	Event *struct {
		Type    string        `json:"type"`
		Message claudeMessage `json:"message"` // message_start
		Delta   struct {
			StopReason string `json:"stop_reason"`
		} `json:"delta"` // message_delta
		Usage *claudeUsage `json:"usage"` // message_delta: the message's final output
	} `json:"event"`
	APIMessageID string `json:"api_message_id"`
	// result
	IsError        bool         `json:"is_error"`
	Result         *string      `json:"result"`
	NumTurns       int          `json:"num_turns"`
	TotalCost      *float64     `json:"total_cost_usd"`
	Usage          *claudeUsage `json:"usage"` // the run's tokens, all its calls
	APIErrorStatus int          `json:"api_error_status"`
	Errors         []string     `json:"errors"`
	Denials        []struct {
		ToolName  string         `json:"tool_name"`
		ToolInput map[string]any `json:"tool_input"`
	} `json:"permission_denials"`
}

type claudeMessage struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *claudeUsage    `json:"usage"`
}

type claudeUsage struct {
	Input      int64 `json:"input_tokens"`
	Output     int64 `json:"output_tokens"`
	CacheRead  int64 `json:"cache_read_input_tokens"`
	CacheWrite int64 `json:"cache_creation_input_tokens"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     map[string]any  `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

func parseClaudeLine(line []byte, s *Stream) []string {
	var l claudeLine
	if !jsonLine(line, &l) {
		return nil
	}
	if l.SessionID != "" {
		s.SessionID = l.SessionID
	}
	switch l.Type {
	case "system":
		return claudeSystem(&l, s)
	case "assistant":
		return claudeAssistant(&l, s)
	case "user":
		return claudeToolResults(&l, s)
	case "rate_limit_event":
		if rl := l.RateLimit; rl != nil && rl.Status == "rejected" {
			lim := &Limit{Message: "usage limit (" + strings.ReplaceAll(rl.RateLimitType, "_", " ") + ")"}
			if rl.ResetsAt > 0 {
				lim.ResetsAt = time.Unix(rl.ResetsAt, 0)
			}
			s.Limit = lim
			return []string{"limit: " + lim.describe()}
		}
	case "result":
		return claudeResult(&l, s)
	case "stream_event":
		claudeEvent(&l, s)
	}
	return nil
}

// claudeEvent reads the API events that --include-partial-messages adds
// to the stream (taskd asks for them when a cost budget is set): a
// message's final output tokens, and whether it asked for a tool, come
// in its message_delta, before the tool runs and the next call is made.
func claudeEvent(l *claudeLine, s *Stream) {
	ev := l.Event
	if ev == nil {
		return
	}
	switch ev.Type {
	case "message_start":
		s.MoreTurns = false
	case "message_delta":
		id := cmp.Or(l.APIMessageID, s.last.id)
		if ev.Usage != nil && id == s.last.id {
			s.countCall(id, s.last.model, Tokens{Output: ev.Usage.Output})
		}
		s.MoreTurns = ev.Delta.StopReason == "tool_use"
	}
}

func claudeSystem(l *claudeLine, s *Stream) []string {
	switch l.Subtype {
	case "init":
		if l.Model != "" {
			s.Model = l.Model
		}
		s.Asking = true
		return []string{fmt.Sprintf("session %s · model %s · in %s", l.SessionID, l.Model, l.Cwd)}
	case "permission_denied":
		var why string
		json.Unmarshal(l.Message, &why)
		d := s.tools[l.ToolUseID]
		if d.Tool != l.ToolName {
			d = Denial{Tool: l.ToolName, Target: d.Target}
		}
		s.addDenial(d)
		return []string{"denied: " + toolLabel(d.Tool, d.Target) + ": " + oneLine(why, 200)}
	case "api_retry":
		s.Trouble = retryText(l)
		return []string{fmt.Sprintf("%s: retry %d of %d in %s", retryProblem(l), l.Attempt, l.MaxRetries,
			(time.Duration(l.RetryDelayMs) * time.Millisecond).Round(time.Second))}
	}
	return nil
}

// retryProblem says what made the CLI retry an API call: an HTTP status,
// or no answer at all (its error is then "unknown": a refused or broken
// connection, or a request that timed out).
func retryProblem(l *claudeLine) string {
	if l.ErrorStatus == 0 {
		return "no answer from the API (a connection error or a timeout: the network, a proxy or firewall, or ANTHROPIC_BASE_URL)"
	}
	return fmt.Sprintf("API error %d (%s)", l.ErrorStatus, l.Error)
}

// retryText is an api_retry line as the agent's last trouble.
func retryText(l *claudeLine) string {
	return fmt.Sprintf("%s; Claude Code was retrying (%d of %d)", retryProblem(l), l.Attempt, l.MaxRetries)
}

func claudeAssistant(l *claudeLine, s *Stream) []string {
	var msg claudeMessage
	json.Unmarshal(l.Message, &msg)
	var blocks []claudeBlock
	json.Unmarshal(msg.Content, &blocks)
	model := msg.Model
	synthetic := model == "<synthetic>" // the CLI's own message: an API error, not a model call
	if !synthetic {
		s.Asking, s.Trouble = false, "" // the model answered
	}
	if !synthetic && (msg.ID == "" || !s.messages[msg.ID]) {
		s.countTurn(msg.ID)
		if model == "" {
			model = s.Model
		}
		var t Tokens
		if u := msg.Usage; u != nil {
			t = Tokens{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
		}
		// The stream carries each message's usage as the message began;
		// its output is counted from its content meanwhile (4 bytes a
		// token), for the estimate, until its message_delta (if the
		// stream has them) gives the real figure.
		t.Output = max(t.Output, int64(len(msg.Content)/4))
		s.countCall(msg.ID, model, t)
	}
	var out []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if text := strings.TrimSpace(b.Text); text != "" {
				s.Text = text
				if synthetic || l.Error != "" {
					s.addError(text)
				}
				out = append(out, "assistant: "+text)
			}
		case "tool_use":
			if !synthetic {
				s.MoreTurns = true // answered by the next call, once the tool has run
			}
			target := toolTarget(b.Input)
			s.rememberTool(b.ID, Denial{Tool: b.Name, Target: target, Rule: ClaudeRule(b.Name, b.Input)})
			s.LastTool = toolLabel(b.Name, target)
			out = append(out, "tool: "+s.LastTool)
		}
	}
	return out
}

func claudeToolResults(l *claudeLine, s *Stream) []string {
	s.Asking = true // the results go to the model
	var msg claudeMessage
	json.Unmarshal(l.Message, &msg)
	var blocks []claudeBlock
	json.Unmarshal(msg.Content, &blocks)
	var out []string
	for _, b := range blocks {
		if b.Type != "tool_result" {
			continue
		}
		text := blockText(b.Content)
		if b.IsError {
			out = append(out, "  error: "+oneLine(text, 200))
		} else {
			out = append(out, "  result: "+summarizeOutput(text))
		}
	}
	return out
}

func claudeResult(l *claudeLine, s *Stream) []string {
	f := &Final{IsError: l.IsError, Subtype: l.Subtype, Turns: l.NumTurns, APIStatus: l.APIErrorStatus,
		OutOfTurns: l.Subtype == "error_max_turns"}
	if l.Result != nil {
		f.Text = *l.Result
	}
	for _, e := range l.Errors {
		s.addError(e)
	}
	if f.IsError && f.Text != "" {
		s.addError(f.Text)
	}
	for _, d := range l.Denials {
		s.addDenial(Denial{Tool: d.ToolName, Target: toolTarget(d.ToolInput), Rule: ClaudeRule(d.ToolName, d.ToolInput)})
	}
	if l.TotalCost != nil {
		s.setCost(*l.TotalCost, false)
	}
	if u := l.Usage; u != nil {
		// The CLI's own count, where the stream had only the output
		// estimated from the text of each message (claudeAssistant).
		s.Tokens = Tokens{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
	}
	if l.NumTurns > s.Turns {
		s.Turns = l.NumTurns
	}
	s.Final = f
	state := "done"
	if f.IsError {
		state = "error (" + f.Subtype + ")"
	}
	line := fmt.Sprintf("%s · %d turns · $%.4f", state, s.Turns, s.CostUSD)
	if f.Text != "" {
		line += " · " + oneLine(f.Text, 200)
	}
	return []string{line}
}

// blockText is a tool result's content as text: a string, or the text
// blocks of an array.
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// summarizeOutput says briefly what a tool returned: its first line and
// how many lines there were.
func summarizeOutput(text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return "(nothing)"
	}
	lines := strings.Count(text, "\n") + 1
	first, _, _ := strings.Cut(text, "\n")
	if lines == 1 {
		return oneLine(first, 120)
	}
	return fmt.Sprintf("%s … (%d lines)", oneLine(first, 100), lines)
}
