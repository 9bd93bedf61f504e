package agent

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts under testdata/")

// readStream parses the stream in testdata/name with parser p and
// returns what it said and the transcript lines.
func readStream(t *testing.T, name string, p StreamParser) (Stream, string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var st Stream
	var tr strings.Builder
	for _, line := range bytes.Split(data, []byte("\n")) {
		for _, l := range p(line, &st) {
			tr.WriteString(l + "\n")
		}
	}
	return st, tr.String()
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n got:\n%s\nwant:\n%s", name, got, want)
	}
}

// TestClaudeStream_Denied: the real CLI's stream of a run refused its
// Write (recorded against a stub Messages API): the denial is named with
// its target, the run is no success although the CLI says "success",
// and the turns, session and cost come from the stream.
func TestClaudeStream_Denied(t *testing.T) {
	st, tr := readStream(t, "claude-denied.jsonl", parseClaudeLine)
	golden(t, "claude-denied.transcript", tr)
	if got, want := DeniedText(st.Denials), "the agent was refused Write (/home/alice/proj/out.txt)"; got != want {
		t.Errorf("denials %q, want %q", got, want)
	}
	r := StreamResult(&st, 0)
	if r.Success || r.Error != "the agent was refused Write (/home/alice/proj/out.txt)" || len(r.Denials) != 1 {
		t.Errorf("result success %v error %q denials %v", r.Success, r.Error, r.Denials)
	}
	if r.SessionID != "22525df4-355e-4676-bcc5-caf92d102103" || r.Turns != 2 || r.CostUSD == nil || *r.CostUSD != 0.00028 || r.Output != "done" {
		t.Errorf("result session %q turns %d cost %v output %q", r.SessionID, r.Turns, r.CostUSD, r.Output)
	}
	if st.LastTool != "Write /home/alice/proj/out.txt" {
		t.Errorf("last tool %q", st.LastTool)
	}
}

// TestClaudeStream_RateLimited: a 429 the CLI does not retry ends the
// stream with is_error although its subtype says success: no success, the
// agent's own text as the error, and a usage limit found.
func TestClaudeStream_RateLimited(t *testing.T) {
	st, tr := readStream(t, "claude-429.jsonl", parseClaudeLine)
	golden(t, "claude-429.transcript", tr)
	r := StreamResult(&st, 1)
	if r.Success || r.Error != "API Error: Request rejected (429) · Rate limit reached" {
		t.Errorf("result success %v error %q", r.Success, r.Error)
	}
	var before Stream // the lines before the result line
	data, _ := os.ReadFile(filepath.Join("testdata", "claude-429.jsonl"))
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	for _, l := range lines[:len(lines)-1] {
		parseClaudeLine(l, &before)
	}
	if before.Turns != 0 {
		t.Errorf("the CLI's own error message counted as %d turns", before.Turns)
	}
	lim := FindLimit(&st, nil, time.Now())
	if lim == nil || lim.Message != "API Error: Request rejected (429) · Rate limit reached" || !lim.ResetsAt.IsZero() {
		t.Errorf("limit = %+v", lim)
	}
}

// TestClaudeStream_MaxTurns: claude stopped by --max-turns says so in its
// result's subtype; no success.
func TestClaudeStream_MaxTurns(t *testing.T) {
	st, _ := readStream(t, "claude-maxturns.jsonl", parseClaudeLine)
	r := StreamResult(&st, 1)
	if r.Success || st.Final == nil || st.Final.Subtype != "error_max_turns" || r.Error != "Reached maximum number of turns (1)" {
		t.Errorf("result success %v error %q final %+v", r.Success, r.Error, st.Final)
	}
}

// TestParseResult_ClaudeJSON: the same rules for --output-format json
// (one result object): is_error is never a success, whatever the text's
// report says, and denials are named.
func TestParseResult_ClaudeJSON(t *testing.T) {
	tests := []struct {
		name, out string
		success   bool
		err       string
	}{
		{"success", `{"type":"result","subtype":"success","is_error":false,"result":"ok {\"success\": true, \"summary\": \"s\"}","session_id":"a"}`, true, ""},
		{"is_error with subtype success", `{"type":"result","subtype":"success","is_error":true,"result":"API Error: Rate limit reached {\"success\": true}","session_id":"a"}`, false, `API Error: Rate limit reached {"success": true}`},
		{"denied", `{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"a","permission_denials":[{"tool_name":"Bash","tool_input":{"command":"rm -rf build"}}]}`, false, "the agent was refused Bash (rm -rf build)"},
		{"error without text", `{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"a"}`, false, "the agent reported an error (error_during_execution)"},
	}
	for _, tt := range tests {
		r := ParseResult("claude-json", []byte(tt.out), 0)
		if r.Success != tt.success || r.Error != tt.err {
			t.Errorf("%s: success %v error %q, want %v %q", tt.name, r.Success, r.Error, tt.success, tt.err)
		}
	}
}

// TestCodexStream and TestOpencodeStream read their formats' events:
// session, turns, tokens, the last tool, the final text and errors.
func TestCodexStream(t *testing.T) {
	st, tr := readStream(t, "codex.jsonl", parseCodexLine)
	golden(t, "codex.transcript", tr)
	r := StreamResult(&st, 0)
	if st.SessionID != "0199a213-81c0-7800-8aa1-bbab2a035a53" || st.Turns != 1 || st.Tokens.Input != 4000 || st.Tokens.CacheRead != 1000 || st.Tokens.Output != 200 {
		t.Errorf("session %q turns %d tokens %+v", st.SessionID, st.Turns, st.Tokens)
	}
	if !r.Success || r.Summary != "fixed" || st.LastTool != "edit update src/login.go" || r.CostUSD != nil || st.CostUSD <= 0 {
		t.Errorf("success %v summary %q last tool %q cost %v estimate %v", r.Success, r.Summary, st.LastTool, r.CostUSD, st.CostUSD)
	}
}

func TestOpencodeStream(t *testing.T) {
	st, tr := readStream(t, "opencode.jsonl", parseOpencodeLine)
	golden(t, "opencode.transcript", tr)
	r := StreamResult(&st, 0)
	if st.SessionID != "ses_494719016ffe85dkDMj0FPRbHK" || st.Turns != 2 || !st.CostKnown || r.CostUSD == nil || *r.CostUSD != 0.0035 {
		t.Errorf("session %q turns %d cost %v", st.SessionID, st.Turns, r.CostUSD)
	}
	if !r.Success || r.Output != "All tests pass now." || st.LastTool != "bash go test ./..." {
		t.Errorf("success %v output %q last tool %q", r.Success, r.Output, st.LastTool)
	}
	var failed Stream
	parseOpencodeLine([]byte(`{"type":"error","sessionID":"ses_x","error":{"name":"APIError","data":{"message":"Rate limit exceeded"}}}`), &failed)
	if r := StreamResult(&failed, 1); r.Success || r.Error != "Rate limit exceeded" {
		t.Errorf("error event: success %v error %q", r.Success, r.Error)
	}
}
