package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// env is one server and a client connected to it over real pipes, with a
// task root, a project the client names as its root, and a home.
type env struct {
	t       *testing.T
	root    string // the task root
	project string // the client's root
	home    string
	srv     *Server
	cs      *mcp.ClientSession
	client  *mcp.Client
}

type envOpts struct {
	protocol  string   // the protocol version the client asks for ("": the newest)
	noRoots   bool     // the client has no roots capability
	roots     []string // the client's roots (default: the project)
	opts      Options  // what the server is given beyond the directories
	progress  func(*mcp.ProgressNotificationClientRequest)
	noProject bool // the server has no project of its own
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{t: t, root: filepath.Join(base, "tasks"), project: filepath.Join(base, "project"), home: filepath.Join(base, "home")}
	for _, d := range []string{e.root, e.project, e.home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(e.home, ".config"))
	opts := o.opts
	opts.Root, opts.Home = e.root, e.home
	if !o.noProject {
		opts.Project = e.project
	}
	e.srv = New(opts)
	e.connect(o)
	return e
}

// connect connects a new client to e's server over two pipes.
func (e *env) connect(o envOpts) {
	t := e.t
	cr, sw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	sr, cw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srv.Run(ctx, &mcp.IOTransport{Reader: sr, Writer: sw}) }()
	copts := &mcp.ClientOptions{}
	if o.noRoots {
		copts.Capabilities = &mcp.ClientCapabilities{}
	}
	if o.progress != nil {
		copts.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { o.progress(r) }
	}
	e.client = mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts)
	roots := o.roots
	if roots == nil {
		roots = []string{e.project}
	}
	for _, r := range roots {
		e.client.AddRoots(&mcp.Root{URI: "file://" + r})
	}
	cs, err := e.client.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, &mcp.ClientSessionOptions{ProtocolVersion: o.protocol})
	if err != nil {
		t.Fatal(err)
	}
	e.cs = cs
	t.Cleanup(func() {
		cs.Close()
		cw.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop")
		}
		sw.Close()
	})
}

// call calls tool with args and returns the text of its result, failing
// the test on a protocol error. isError reports the result's IsError.
func (e *env) call(tool string, args any) (text string, isError bool) {
	e.t.Helper()
	res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		e.t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// callJSON calls tool and decodes its JSON answer into a map.
func (e *env) callJSON(tool string, args any) map[string]any {
	e.t.Helper()
	text, isErr := e.call(tool, args)
	if isErr {
		e.t.Fatalf("%s(%v) failed: %s", tool, args, text)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		e.t.Fatalf("%s answered no JSON object: %v\n%s", tool, err, text)
	}
	return m
}

// write writes a file, making its directories.
func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
