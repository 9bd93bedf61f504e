package daemon_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/taskd/taskd/daemon/config"
)

// turnStub is a stand-in for the Messages API on loopback, like
// messagesStub, whose every answer a test chooses by the request's number
// (1 for the first) and body: text, a tool call (Bash or Write), an HTTP
// error, or nothing until the test lets it go on (Hold).
type turnStub struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
	answered int // replies written in full
}

// A stubTurn is one answer of a turnStub.
type stubTurn struct {
	Text        string
	Bash        string            // a Bash tool call running this command
	Write       map[string]string // a Write tool call: file_path and content
	Status      int               // an HTTP error status (429, 529) with x-should-retry: false
	Hold        <-chan struct{}   // answer only once this is closed (or the client goes)
	OutputUsage int               // output tokens the message reports (default 5)
}

func newTurnStub(t *testing.T, answer func(n int, body string) stubTurn) *turnStub {
	s := &turnStub{}
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
			w.Header().Set("x-should-retry", "false")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(turn.Status)
			kind := map[int]string{429: "rate_limit_error", 529: "overloaded_error"}[turn.Status]
			fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":"stub error %d"}}`, kind, turn.Status)
			s.done()
			return
		}
		writeTurn(w, n, turn)
		s.done()
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *turnStub) done() {
	s.mu.Lock()
	s.answered++
	s.mu.Unlock()
}

// writeTurn streams one assistant message as server-sent events.
func writeTurn(w http.ResponseWriter, n int, turn stubTurn) {
	out := turn.OutputUsage
	if out == 0 {
		out = 5
	}
	events := [][2]string{{"message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_stub_%d","type":"message","role":"assistant","model":"stub","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`, n)}}
	stop := "end_turn"
	tool, input := "", any(nil)
	switch {
	case turn.Bash != "":
		tool, input = "Bash", map[string]string{"command": turn.Bash, "description": "run a command"}
	case turn.Write != nil:
		tool, input = "Write", turn.Write
	}
	if tool != "" {
		in, _ := json.Marshal(input)
		partial, _ := json.Marshal(string(in))
		events = append(events,
			[2]string{"content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_%d","name":%q,"input":{}}}`, n, tool)},
			[2]string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":` + string(partial) + `}}`})
		stop = "tool_use"
	} else {
		text, _ := json.Marshal(turn.Text)
		events = append(events,
			[2]string{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
			[2]string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + string(text) + `}}`})
	}
	events = append(events,
		[2]string{"content_block_stop", `{"type":"content_block_stop","index":0}`},
		[2]string{"message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, out)},
		[2]string{"message_stop", `{"type":"message_stop"}`})
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range events {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev[0], ev[1])
	}
}

func (s *turnStub) bodies() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func (s *turnStub) replies() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.answered
}

// streamingClaude is the built-in claude profile's command (stream-json)
// with the real CLI, pointed at stub.
func streamingClaude(t *testing.T, bin string, stub *turnStub, extra config.ProfileSpec) map[string]config.ProfileSpec {
	p := extra
	p.Command = []string{bin, "-p", "--output-format", "stream-json", "--verbose"}
	p.Prompt, p.Output = "stdin", "claude-stream"
	p.Env = append([]string{"ANTHROPIC_BASE_URL=" + stub.URL, "ANTHROPIC_API_KEY=sk-dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir()}, p.Env...)
	if p.Timeout == "" {
		p.Timeout = "2m"
	}
	return map[string]config.ProfileSpec{"claude": p}
}
