package mcpserver

import (
	"net/url"
	"path/filepath"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file is how the server learns where its client works: the client's
// MCP roots. A tool that needs them asks once (an input request the client
// answers before it calls the tool again, or, on older protocol versions,
// a roots/list request the SDK sends for it); the answer is kept until the
// client says its roots changed. A client without roots works in the
// server's project directory (Options.Project).

// rootsInput names the roots request among a tool result's input requests.
const rootsInput = "roots"

// rootCache remembers the client's roots once it has named them.
type rootCache struct {
	mu    sync.Mutex
	roots []string
	known bool
}

func (c *rootCache) get() ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.roots, c.known
}

func (c *rootCache) set(roots []string) {
	c.mu.Lock()
	c.roots, c.known = roots, true
	c.mu.Unlock()
}

func (c *rootCache) forget() {
	c.mu.Lock()
	c.roots, c.known = nil, false
	c.mu.Unlock()
}

// clientScope returns what the client of req may reach. When the client
// has roots the server does not know yet, it returns instead the result
// that asks for them: the tool returns it as it is, before it does
// anything, and is called again with the answer.
func (s *Server) clientScope(req *mcp.CallToolRequest) (*scope, *mcp.CallToolResult) {
	if resp, ok := req.Params.InputResponses[rootsInput]; ok {
		var roots []string
		if lr, ok := resp.(*mcp.ListRootsResult); ok {
			roots = s.usableRoots(lr.Roots)
		}
		s.roots.set(roots)
		return s.scopeOf(roots), nil
	}
	if roots, ok := s.roots.get(); ok {
		return s.scopeOf(roots), nil
	}
	if caps := req.ClientCapabilities(); caps != nil && caps.RootsV2 != nil && canAsk(req) {
		return nil, &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{rootsInput: &mcp.ListRootsParams{}}}
	}
	return s.scopeOf(nil), nil
}

// newProtocol is the first protocol version whose requests carry their
// version, and whose clients answer input requests (SEP-2322).
const newProtocol = "2026-07-28"

// canAsk reports whether the client of req can be asked for its roots: a
// call on the newest protocol in a session on that protocol answers an
// input request itself, and a call on an older one gets a roots/list
// request from the SDK. A client that began the older way (initialize)
// and then calls the newer way, as Claude Code does when the server was
// slow to answer its first probe, gets neither reliably: it is not asked,
// and works in the server's project directory (Claude Code starts the
// server in its own working directory, which is its root).
func canAsk(req *mcp.CallToolRequest) bool {
	v, _ := req.Params.GetMeta()["io.modelcontextprotocol/protocolVersion"].(string)
	session := newProtocol
	if p := req.Session.InitializeParams(); p != nil {
		session = p.ProtocolVersion
	}
	return (v >= newProtocol) == (session >= newProtocol)
}

// usableRoots returns the directories of roots: file URIs with an
// absolute path, and neither "/" nor a directory that holds the home (a
// client cannot open the whole machine that way).
func (s *Server) usableRoots(roots []*mcp.Root) []string {
	var out []string
	for _, r := range roots {
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" || u.Host != "" && u.Host != "localhost" || !filepath.IsAbs(u.Path) {
			s.opts.Log.Warn("a root that is not a local directory is ignored", "uri", r.URI)
			continue
		}
		dir := filepath.Clean(u.Path)
		if !s.mayBeRoot(dir) {
			s.opts.Log.Warn("a root that would open too much is ignored", "dir", dir)
			continue
		}
		if !slices.Contains(out, dir) {
			out = append(out, dir)
		}
	}
	return out
}

// scopeOf is the scope of a client whose roots are roots; without any,
// the server's project directory stands for them.
func (s *Server) scopeOf(roots []string) *scope {
	if len(roots) == 0 && s.opts.Project != "" && s.mayBeRoot(s.opts.Project) {
		roots = []string{filepath.Clean(s.opts.Project)}
	}
	return &scope{roots: roots, home: s.opts.Home, plugins: s.opts.PluginDirs}
}

// mayBeRoot reports whether dir may be a client's root: not "/" and not
// an ancestor of the home (the home itself may be one).
func (s *Server) mayBeRoot(dir string) bool {
	if dir == "/" {
		return false
	}
	home := filepath.Clean(s.opts.Home)
	return s.opts.Home == "" || dir == home || !within(home, dir)
}
