// Package mcpserver is taskd's MCP server, what `taskd mcp` serves over
// stdio to a Claude Code session (or any MCP client). It offers two sets
// of tools:
//
//   - flow's navigator: the eight tools of the flow plugin's navigator
//     server (Navigate, ListWorkflows, SelectWorkflow, Diagram,
//     CopyWorkflows, CopyAgents, LoadWorkflows, ListCatalog) by flow's
//     names and input schemas, answering with flow's JSON and flow's
//     errors, over the same task files and workflow directories, with
//     taskd's documented deviations only (docs/mcp.md);
//   - the daemon's front door: submit, status, show, wait, resolve,
//     cancel, retry and logs, each a call of the code taskd's commands use
//     (package control, package status), with their validation.
//
// The server serves one root of task lists, which must be its user's, as
// a daemon's must. What it reads and writes for a client stays inside the
// client's roots (the directories the client names through MCP roots, or
// the server's working directory when it names none) and the task root:
// a path elsewhere, or a link that leads elsewhere, is refused.
package mcpserver

import (
	"context"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Toolset says which tools a Server offers.
type Toolset int

const (
	// Navigator is flow's eight navigator tools.
	Navigator Toolset = 1 << iota
	// Daemon is the daemon's tools: submit, status, show, wait, resolve,
	// cancel, retry, logs.
	Daemon
	// All is both.
	All = Navigator | Daemon
)

// Options configures a Server.
type Options struct {
	// Root is the root of task lists (absolute), as daemon.ResolveRoot
	// finds it.
	Root string
	// Project stands for the client's root when the client names none
	// (an MCP client without roots): flow's project root. Usually the
	// directory the client started the server in.
	Project string
	// DefaultList is the list a task named by its id alone is looked up
	// in, and the list submit writes to ($TASKD_LIST); "" looks the id
	// up in every list and submits to "default".
	DefaultList string
	// Home is the user's home directory, whose credential stores are
	// never read.
	Home string
	// PluginDirs are directories LoadWorkflows may also read workflows
	// from: where Claude Code keeps its plugins.
	PluginDirs []string
	Tools      Toolset // zero: All
	// AllowBypass lets submit ask for the bypassPermissions mode.
	AllowBypass bool
	Version     string
	Log         *slog.Logger // nil: nothing is logged
}

// A Server is one MCP server: its tools, and what it remembers for its
// client (the client's roots, the workflows LoadWorkflows loaded).
type Server struct {
	opts  Options
	srv   *mcp.Server
	roots rootCache

	mu       sync.Mutex
	external []*loaded // workflows LoadWorkflows loaded from a path, in order
}

// New returns a Server with opts.
func New(opts Options) *Server {
	if opts.Tools == 0 {
		opts.Tools = All
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Version == "" {
		opts.Version = "devel"
	}
	s := &Server{opts: opts}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "taskd", Title: "taskd", Version: opts.Version}, &mcp.ServerOptions{
		Logger:       opts.Log,
		Instructions: instructions,
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) {
			s.roots.forget()
		},
	})
	if opts.Tools&Navigator != 0 {
		s.addNavigatorTools()
	}
	if opts.Tools&Daemon != 0 {
		s.addDaemonTools()
	}
	return s
}

// instructions tell a client what the server is for.
const instructions = `taskd runs tasks from files in ~/.claude/tasks/<list>/: agents (claude -p, a shell script, ...), flow-compatible workflows, children.
Navigate and the other capitalised tools are flow's navigator: they walk a workflow step by step, as /flow:run does.
submit hands work to the taskd daemon, which runs it in your directory while you do something else; status, show, wait and logs follow it; resolve answers a task that waits for a person; cancel and retry steer it.`

// Run serves the client on transport t until it goes away or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.srv.Run(ctx, t)
}
