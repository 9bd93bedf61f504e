// Package claudestub is a stand-in for the Anthropic Messages API on
// loopback, for tests that drive the real Claude Code CLI (installed by
// scripts/test-deps into testdata/node). The CLI, pointed at a Server with
// the environment Env returns, sends its requests there; the test chooses
// every answer by the request's number and body: text, a tool call the
// real CLI then carries out (Bash, Write, Edit, Read, or any tool by name,
// an MCP server's included), an HTTP error, or nothing until the test lets
// it go on.
//
// Imported by tests only.
package claudestub

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// A Turn is one answer of a Server: an assistant message of Text, a tool
// call, or both (the text first); or an HTTP error.
type Turn struct {
	Text  string
	Bash  string            // a Bash tool call running this command
	Write map[string]string // a Write tool call: file_path and content
	Tool  string            // any other tool call by name, with Input
	Input any

	// Status is an HTTP error status (429, 529, 500 …) sent with
	// x-should-retry: false instead of a message.
	Status int
	// Hold, when set, delays the answer until it is closed (or the
	// client goes away).
	Hold <-chan struct{}
	// OutputTokens is the output the message reports (default 5).
	OutputTokens int
}

// Edit is a Turn that calls the Edit tool on path, replacing old by new.
func Edit(path, old, new string) Turn {
	return Turn{Tool: "Edit", Input: map[string]any{"file_path": path, "old_string": old, "new_string": new}}
}

// Read is a Turn that calls the Read tool on path.
func Read(path string) Turn {
	return Turn{Tool: "Read", Input: map[string]any{"file_path": path}}
}

// A Server answers POST /v1/messages with the Turns its answer function
// chooses, and records every request body.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
	answered int
}

// New starts a Server, closed when the test ends. answer gets the
// request's number (1 for the first) and its body.
func New(t testing.TB, answer func(n int, body string) Turn) *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		s.requests = append(s.requests, string(body))
		n := len(s.requests)
		s.mu.Unlock()
		turn := answer(n, string(body))
		if turn.Hold != nil {
			select {
			case <-turn.Hold:
			case <-r.Context().Done():
				return
			}
		}
		if turn.Status != 0 {
			writeError(w, turn.Status)
		} else {
			writeTurn(w, n, turn)
		}
		s.mu.Lock()
		s.answered++
		s.mu.Unlock()
	}))
	t.Cleanup(s.Close)
	return s
}

// Bodies returns the request bodies received so far, in order.
func (s *Server) Bodies() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Replies returns how many answers were written in full.
func (s *Server) Replies() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.answered
}

// Env is the environment that points the CLI at s, with a private HOME
// and XDG_CONFIG_HOME for the CLI's own files, so tests run in parallel,
// and a private TMPDIR: the CLI keeps a folder per working directory in
// <TMPDIR>/claude-<uid>, which would collect in the system's.
func (s *Server) Env(t testing.TB) []string {
	return []string{"ANTHROPIC_BASE_URL=" + s.URL, "ANTHROPIC_API_KEY=sk-dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(),
		"TMPDIR=" + t.TempDir()}
}

func writeError(w http.ResponseWriter, status int) {
	w.Header().Set("x-should-retry", "false")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	kind := map[int]string{429: "rate_limit_error", 529: "overloaded_error"}[status]
	if kind == "" {
		kind = "api_error"
	}
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":"stub error %d"}}`, kind, status)
}

// writeTurn streams one assistant message as server-sent events.
func writeTurn(w http.ResponseWriter, n int, turn Turn) {
	out := turn.OutputTokens
	if out == 0 {
		out = 5
	}
	events := [][2]string{{"message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_stub_%d","type":"message","role":"assistant","model":"stub","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`, n)}}
	tool, input := turn.Tool, turn.Input
	switch {
	case turn.Bash != "":
		tool, input = "Bash", map[string]string{"command": turn.Bash, "description": "run a command"}
	case turn.Write != nil:
		tool, input = "Write", turn.Write
	}
	index := 0
	if turn.Text != "" || tool == "" {
		text, _ := json.Marshal(turn.Text)
		events = append(events,
			[2]string{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
			[2]string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + string(text) + `}}`},
			[2]string{"content_block_stop", `{"type":"content_block_stop","index":0}`})
		index++
	}
	stop := "end_turn"
	if tool != "" {
		in, _ := json.Marshal(input)
		partial, _ := json.Marshal(string(in))
		events = append(events,
			[2]string{"content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":"toolu_%d","name":%q,"input":{}}}`, index, n, tool)},
			[2]string{"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, index, partial)},
			[2]string{"content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index)})
		stop = "tool_use"
	}
	events = append(events,
		[2]string{"message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, out)},
		[2]string{"message_stop", `{"type":"message_stop"}`})
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range events {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev[0], ev[1])
	}
}

// Binary returns the Claude Code CLI that scripts/test-deps installs into
// the module's testdata/node, or skips the test when it is missing (fails
// it instead with TASKD_REQUIRE_TOOLS=1, as in CI).
func Binary(t testing.TB) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "testdata", "node", "node_modules", ".bin", "claude")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("TASKD_REQUIRE_TOOLS") == "1" {
			t.Fatalf("the Claude Code CLI is not installed (%v), and TASKD_REQUIRE_TOOLS=1", err)
		}
		t.Skipf("skipping: the Claude Code CLI is not installed (run: scripts/test-deps)")
	}
	return bin
}

// moduleRoot is the nearest directory above the working directory (a
// test's package directory) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = up
	}
}
