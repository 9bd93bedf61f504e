package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Result is the normalised outcome of one attempt (docs/tasks.md), written to
// the run folder as result.json.
type Result struct {
	Success    bool     `json:"success"`
	Summary    string   `json:"summary"`
	Results    string   `json:"results,omitempty"`
	Answer     string   `json:"answer,omitempty"`
	Confidence *float64 `json:"confidence,omitempty"`
	ExitCode   int      `json:"exitCode"`
	SessionID  string   `json:"sessionId,omitempty"`
	CostUSD    *float64 `json:"costUsd,omitempty"`
	// ToolInvocations is how many tools the agent invoked, when that is
	// known (tooluse.go).
	ToolInvocations *int  `json:"toolInvocations,omitempty"`
	DurationMs      int64 `json:"durationMs"`
	// StartedAt is when the agent's process was started (absent if it
	// never was).
	StartedAt *time.Time `json:"startedAt,omitempty"`
	Error     string     `json:"error,omitempty"`
	// Outcome is set when the attempt did not end on its own: "timed_out",
	// "cancelled", "not_started", "paused" (a usage limit) or
	// "over_budget".
	Outcome string `json:"outcome,omitempty"`
	// Output is the agent's final text (claude: the result field; others:
	// the end of stdout). It is not part of result.json's contract but is
	// delivered to parents.
	Output string `json:"output,omitempty"`
	// Turns is how many times the agent called its model, when its
	// output says (a stream, claude's JSON).
	Turns int `json:"turns,omitempty"`
	// Denials are the tool calls the agent was refused: such an attempt
	// did not do what was asked, and is no success.
	Denials []Denial `json:"permissionDenials,omitempty"`
	// Limit is the usage limit that paused the attempt (outcome "paused").
	Limit *Limit `json:"limit,omitempty"`
	// Progress is the attempt's last progress, for a streaming agent.
	Progress *Progress `json:"progress,omitempty"`
	// OutputCut is how many bytes were cut from the middle of each of
	// the attempt's logs that passed its cap ("stdout.log": 1503238553).
	OutputCut map[string]int64 `json:"outputCut,omitempty"`
}

// MaxScan bounds how much of an agent's output is searched for a result
// object: the end of the output is what matters.
const MaxScan = 256 << 10

// ParseResult reads an agent's stdout according to the profile's output
// kind and the process's exit code. The result is the last JSON object with
// a boolean "success" in the agent's final text (for claude-json, the
// "result" field of the JSON the CLI prints); without one, exit code 0 is
// success. A claude result that says is_error, or lists denied tool
// calls, is never a success.
func ParseResult(output string, stdout []byte, exitCode int) Result {
	if output == "claude-json" {
		if obj := LastObject(stdout, func(m map[string]json.RawMessage) bool { _, ok := m["session_id"]; return ok }); obj != nil {
			var st Stream
			parseClaudeLine(obj, &st)
			if st.Final != nil {
				return StreamResult(&st, exitCode)
			}
		}
	}
	r := Result{ExitCode: exitCode, Success: exitCode == 0}
	text := string(tail(stdout, MaxScan))
	r.Output = strings.TrimSpace(text)
	readReport(&r, text)
	return r
}

// readReport takes the agent's report from its final text: the last JSON
// object with a boolean "success" sets the result's success, summary,
// results, answer, confidence, error and tool count. The summary is
// otherwise the text's last line.
func readReport(r *Result, text string) {
	if obj := LastObject([]byte(text), HasBoolSuccess); obj != nil {
		var rep struct {
			Success    bool     `json:"success"`
			Summary    any      `json:"summary"`
			Results    any      `json:"results"`
			Answer     any      `json:"answer"`
			Confidence *float64 `json:"confidence"`
			Error      any      `json:"error"`
			Tools      *int     `json:"tool_invocation_count"`
		}
		if json.Unmarshal(obj, &rep) == nil {
			r.Success = rep.Success
			r.Summary = AsText(rep.Summary)
			r.Results = AsText(rep.Results)
			r.Answer = AsText(rep.Answer)
			r.Confidence = rep.Confidence
			if rep.Tools != nil && *rep.Tools >= 0 {
				r.ToolInvocations = rep.Tools
			}
			if e := AsText(rep.Error); e != "" {
				r.Error = e
			}
		}
	}
	if r.Summary == "" {
		r.Summary = Summarize(r.Output)
	}
}

func HasBoolSuccess(m map[string]json.RawMessage) bool {
	v, ok := m["success"]
	return ok && (bytes.Equal(v, []byte("true")) || bytes.Equal(v, []byte("false")))
}

// LastObject returns the last JSON object in data (searching from the end)
// that keep accepts, or nil.
func LastObject(data []byte, keep func(map[string]json.RawMessage) bool) []byte {
	data = tail(data, MaxScan)
	for end := len(data); end > 0; {
		i := bytes.LastIndexByte(data[:end], '{')
		if i < 0 {
			return nil
		}
		dec := json.NewDecoder(bytes.NewReader(data[i:]))
		var m map[string]json.RawMessage
		if err := dec.Decode(&m); err == nil && keep(m) {
			return data[i : i+int(dec.InputOffset())]
		}
		end = i
	}
	return nil
}

func AsText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// Summarize shortens an agent's text to its last non-empty line, at most
// 300 characters.
func Summarize(text string) string {
	text = strings.TrimSpace(text)
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = strings.TrimSpace(text[i+1:])
	}
	return Truncate(text, 300)
}

func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func tail(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return b[len(b)-n:]
}

// ReadResult reads the result.json of a run folder, or, when the run
// folder has none (or it cannot be read), the result kept for it while the run folder could not
// take it (kept.go).
func ReadResult(runDir string) (Result, bool) {
	data, err := readRunFile(runDir, "result.json", 16<<20)
	if err != nil {
		data, err = readKept(runDir)
	}
	if err != nil {
		return Result{}, false
	}
	var r Result
	if json.Unmarshal(data, &r) != nil {
		return Result{}, false
	}
	return r, true
}
