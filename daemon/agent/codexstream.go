package agent

import (
	"fmt"
	"strings"
)

// codex exec --json prints one JSON event a line: thread.started (the
// session), turn.started, item.started / item.updated / item.completed
// (agent messages, reasoning, commands, file changes, tool calls, web
// searches, errors), and turn.completed (with the turn's token usage) or
// turn.failed; error for a failure of the stream itself.

type codexLine struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Usage    *struct {
		Input       int64 `json:"input_tokens"`
		CachedInput int64 `json:"cached_input_tokens"`
		Output      int64 `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string     `json:"message"` // an error event's
	Item    *codexItem `json:"item"`
}

type codexItem struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Command  string `json:"command"`
	Output   string `json:"aggregated_output"`
	ExitCode *int   `json:"exit_code"`
	Status   string `json:"status"`
	Message  string `json:"message"`
	Server   string `json:"server"`
	Tool     string `json:"tool"`
	Query    string `json:"query"`
	Changes  []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
}

func parseCodexLine(line []byte, s *Stream) []string {
	var l codexLine
	if !jsonLine(line, &l) {
		return nil
	}
	switch l.Type {
	case "thread.started":
		s.SessionID = l.ThreadID
		return []string{"session " + l.ThreadID}
	case "turn.completed":
		s.countTurn("")
		if u := l.Usage; u != nil {
			s.addTokens(s.Model, Tokens{Input: u.Input - u.CachedInput, CacheRead: u.CachedInput, Output: u.Output})
		}
		s.Final = &Final{Text: s.Text}
		return []string{fmt.Sprintf("turn %d done · %d tokens so far", s.Turns, s.Tokens.Input+s.Tokens.CacheRead+s.Tokens.Output)}
	case "turn.failed", "error":
		msg := l.Message
		if l.Error != nil {
			msg = l.Error.Message
		}
		s.addError(msg)
		s.Final = &Final{IsError: true, Text: msg}
		return []string{"error: " + oneLine(msg, 300)}
	case "item.started", "item.completed":
		if l.Item != nil {
			return codexItemLines(l.Type == "item.completed", l.Item, s)
		}
	}
	return nil
}

func codexItemLines(done bool, it *codexItem, s *Stream) []string {
	switch it.Type {
	case "agent_message":
		if done && strings.TrimSpace(it.Text) != "" {
			s.Text = strings.TrimSpace(it.Text)
			return []string{"assistant: " + s.Text}
		}
	case "command_execution":
		if !done {
			s.LastTool = toolLabel("command", oneLine(it.Command, 120))
			return []string{"tool: " + s.LastTool}
		}
		if it.ExitCode != nil && *it.ExitCode != 0 {
			return []string{fmt.Sprintf("  error: exit status %d: %s", *it.ExitCode, oneLine(it.Output, 200))}
		}
		return []string{"  result: " + summarizeOutput(it.Output)}
	case "file_change":
		if done {
			var paths []string
			for _, c := range it.Changes {
				paths = append(paths, c.Kind+" "+c.Path)
			}
			s.LastTool = toolLabel("edit", oneLine(strings.Join(paths, ", "), 120))
			return []string{"tool: " + s.LastTool}
		}
	case "mcp_tool_call":
		if !done {
			s.LastTool = toolLabel(it.Server+"."+it.Tool, "")
			return []string{"tool: " + s.LastTool}
		}
	case "web_search":
		if !done {
			s.LastTool = toolLabel("web search", oneLine(it.Query, 120))
			return []string{"tool: " + s.LastTool}
		}
	case "error":
		s.addError(it.Message)
		return []string{"error: " + oneLine(it.Message, 300)}
	}
	return nil
}
