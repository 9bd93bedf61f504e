package agent

import (
	"encoding/json"
	"fmt"
	"strings"
)

// opencode run --format json prints one JSON event a line, each with the
// session (sessionID) and a part: step_start, text (a finished text part),
// tool_use (a tool call, with its state: input, output, status),
// step_finish (the step's reason, tokens and cost) and error.

type opencodeLine struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Part      struct {
		Type   string   `json:"type"`
		Text   string   `json:"text"`
		Tool   string   `json:"tool"`
		Reason string   `json:"reason"`
		Cost   *float64 `json:"cost"`
		Tokens *struct {
			Input     int64 `json:"input"`
			Output    int64 `json:"output"`
			Reasoning int64 `json:"reasoning"`
			Cache     struct {
				Read  int64 `json:"read"`
				Write int64 `json:"write"`
			} `json:"cache"`
		} `json:"tokens"`
		State struct {
			Status string         `json:"status"`
			Input  map[string]any `json:"input"`
			Output string         `json:"output"`
			Error  string         `json:"error"`
		} `json:"state"`
	} `json:"part"`
	Error json.RawMessage `json:"error"`
}

func parseOpencodeLine(line []byte, s *Stream) []string {
	var l opencodeLine
	if !jsonLine(line, &l) {
		return nil
	}
	if l.SessionID != "" {
		first := s.SessionID == ""
		s.SessionID = l.SessionID
		if first {
			return append([]string{"session " + l.SessionID}, opencodeEvent(&l, s)...)
		}
	}
	return opencodeEvent(&l, s)
}

func opencodeEvent(l *opencodeLine, s *Stream) []string {
	p := &l.Part
	switch l.Type {
	case "text":
		if text := strings.TrimSpace(p.Text); text != "" {
			s.Text = text
			return []string{"assistant: " + text}
		}
	case "tool_use":
		s.LastTool = toolLabel(p.Tool, toolTarget(p.State.Input))
		out := []string{"tool: " + s.LastTool}
		switch p.State.Status {
		case "completed":
			out = append(out, "  result: "+summarizeOutput(p.State.Output))
		case "error":
			out = append(out, "  error: "+oneLine(p.State.Error, 200))
		}
		return out
	case "step_finish":
		s.countTurn("")
		if t := p.Tokens; t != nil {
			s.addTokens(s.Model, Tokens{Input: t.Input, Output: t.Output + t.Reasoning, CacheRead: t.Cache.Read, CacheWrite: t.Cache.Write})
		}
		if p.Cost != nil {
			s.setCost(*p.Cost, true)
		}
		if p.Reason == "stop" {
			s.Final = &Final{Text: s.Text}
		}
		return []string{fmt.Sprintf("step %d done (%s) · $%.4f", s.Turns, p.Reason, s.CostUSD)}
	case "error":
		msg := opencodeError(l.Error)
		s.addError(msg)
		s.Final = &Final{IsError: true, Text: msg}
		return []string{"error: " + oneLine(msg, 300)}
	}
	return nil
}

// opencodeError finds the message of an error event: a string, or an
// object with a message (possibly under data).
func opencodeError(raw json.RawMessage) string {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text
	}
	var e struct {
		Name    string `json:"name"`
		Message string `json:"message"`
		Data    struct {
			Message string `json:"message"`
		} `json:"data"`
	}
	json.Unmarshal(raw, &e)
	switch {
	case e.Data.Message != "":
		return e.Data.Message
	case e.Message != "":
		return e.Message
	}
	return e.Name
}
