package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRoots_MixedProtocol: a client that begins the older way
// (initialize, on 2025-11-25) and then calls on the newest protocol, as
// Claude Code does when a server was slow to answer its first probe, is
// not asked for its roots (it answers neither way reliably): the call
// completes, in the server's project directory.
func TestRoots_MixedProtocol(t *testing.T) {
	base := t.TempDir()
	project := filepath.Join(base, "project")
	os.Mkdir(project, 0o700)
	srv := New(Options{Root: filepath.Join(base, "tasks"), Project: project, Home: filepath.Join(base, "home")})
	cr, sw, err := os.Pipe()
	must(t, err)
	sr, cw, err := os.Pipe()
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, &mcp.IOTransport{Reader: sr, Writer: sw}) }()
	defer func() { cw.Close(); cancel(); <-done; sw.Close(); cr.Close() }()

	meta := `"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
 "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": true}}}`
	for _, msg := range []string{
		`{"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"roots": {"listChanged": true}}, "clientInfo": {"name": "c", "version": "1"}}}`,
		`{"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}`,
		`{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "submit", "arguments": {"prompt": "x"}, ` + meta + `}}`,
	} {
		var compact json.RawMessage
		must(t, json.Unmarshal([]byte(msg), &compact))
		_, err := cw.Write(append(compact, '\n'))
		must(t, err)
	}
	lines := make(chan []byte)
	go func() {
		sc := bufio.NewScanner(cr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the server closed the connection")
			}
			var m struct {
				ID     any    `json:"id"`
				Method string `json:"method"`
				Result struct {
					StructuredContent struct{ Cwd string } `json:"structuredContent"`
				} `json:"result"`
			}
			must(t, json.Unmarshal(line, &m))
			switch {
			case m.Method != "":
				t.Fatalf("the server sent a request: %s", line)
			case m.ID == 7.0:
				if m.Result.StructuredContent.Cwd != project {
					t.Errorf("submit answered %s, want the cwd %s", line, project)
				}
				return
			}
		case <-deadline:
			t.Fatal("no answer to the call")
		}
	}
}
