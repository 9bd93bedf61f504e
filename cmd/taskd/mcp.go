package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/mcpserver"
	"github.com/taskd/taskd/install"
	"github.com/taskd/taskd/internal/proc"
)

func init() {
	register(&command{
		name:  "mcp",
		usage: "[--root DIR] [--project DIR] [--navigator | --daemon] [--allow-bypass] | install [--scope user|project|local] [--name NAME] [--json] [--run]",
		short: "serve Claude Code (MCP over stdio): flow's navigator and the daemon's tools",
		group: "Daemon",
		long: `
Mcp is an MCP server on standard input and output, for Claude Code (or any
MCP client) to start from its configuration. It offers two sets of tools
(docs/mcp.md):

	flow's navigator   Navigate, ListWorkflows, SelectWorkflow, Diagram,
	                   CopyWorkflows, CopyAgents, LoadWorkflows, ListCatalog:
	                   the tools of the flow plugin's navigator server, by
	                   the same names, arguments and answers, over the same
	                   task files and workflows; a flow user replaces the
	                   navigator's command with 'taskd mcp' and /flow:run
	                   works on
	the daemon         submit (hand work to the daemon, run in the session's
	                   directory), status, show, wait, resolve, cancel, retry,
	                   logs: what the commands of the same names do

	--root DIR       the root of task lists (default as for taskd run)
	--project DIR    the project when the client names no directory it works
	                 in (MCP roots); default: the current directory
	--navigator      offer flow's navigator tools only
	--daemon         offer the daemon's tools only
	--allow-bypass   let submit ask for the bypassPermissions mode

What the server reads and writes for a client stays in the client's
directories (its MCP roots, else --project) and the task root, whose lists
must be its user's, as the daemon requires. docs/security.md says what a
session that may call these tools can make the daemon do.

'taskd mcp install' prints the command that adds the server to Claude
Code, for you (--scope user, the default), for a project (--scope
project: its .mcp.json), or for this directory only (--scope local);
--run runs it, --json prints the .mcp.json entry instead. --name names the
server (default taskd; its tools are then mcp__taskd__submit, …); a flow
user can name it navigator to take the navigator's place.

	taskd mcp install --run
	taskd mcp install --scope project --name navigator --json > .mcp.json
	claude -p 'queue the flaky test fix' --allowedTools mcp__taskd__submit
`,
		run: runMCP,
	})
}

func runMCP(ctx context.Context, inv *invocation) error {
	if len(inv.args) > 0 && inv.args[0] == "install" {
		return runMCPInstall(ctx, inv, inv.args[1:])
	}
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	project := fs.String("project", "", "the project when the client names no root")
	navigatorOnly := fs.Bool("navigator", false, "offer flow's navigator tools only")
	daemonOnly := fs.Bool("daemon", false, "offer the daemon's tools only")
	allowBypass := fs.Bool("allow-bypass", false, "let submit ask for bypassPermissions")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return inv.usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	tools := mcpserver.All
	switch {
	case *navigatorOnly && *daemonOnly:
		return inv.usageErrorf("--navigator and --daemon exclude each other: without either, both sets are offered")
	case *navigatorOnly:
		tools = mcpserver.Navigator
	case *daemonOnly:
		tools = mcpserver.Daemon
	}
	r, err := daemon.ResolveRoot(*root, os.Getenv)
	if err != nil {
		return err
	}
	dir := *project
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	home, _ := os.UserHomeDir()
	srv := mcpserver.New(mcpserver.Options{Root: r, Project: dir, DefaultList: os.Getenv("TASKD_LIST"), Home: home,
		PluginDirs: claudePluginDirs(home), Tools: tools, AllowBypass: *allowBypass, Version: versionString(),
		Log: slog.New(slog.NewTextHandler(inv.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	err = srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{inv.stdout}, MaxLineLength: mcpMaxMessage})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) || ctx.Err() != nil {
		return nil // the client went away, or we were told to stop
	}
	return err
}

// mcpMaxMessage bounds one message a client sends: four times the largest
// task file.
const mcpMaxMessage = 4 << 20

// claudePluginDirs are where Claude Code keeps its plugins, whose
// workflows LoadWorkflows may load.
func claudePluginDirs(home string) []string {
	if dir := os.Getenv("CLAUDE_CONFIG_DIR"); dir != "" {
		return []string{filepath.Join(dir, "plugins")}
	}
	if home == "" {
		return nil
	}
	return []string{filepath.Join(home, ".claude", "plugins")}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// runMCPInstall prints, or runs, what adds taskd's MCP server to Claude
// Code.
func runMCPInstall(ctx context.Context, inv *invocation, args []string) error {
	inv.args = args
	fs := inv.flags()
	scope := fs.String("scope", "user", "user, project or local")
	name := fs.String("name", "taskd", "the server's name in Claude Code")
	asJSON := fs.Bool("json", false, "print the .mcp.json entry")
	doRun := fs.Bool("run", false, "run claude mcp add")
	if err := inv.parse(fs); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return inv.usageErrorf("unexpected argument %q", fs.Arg(0))
	case *scope != "user" && *scope != "project" && *scope != "local":
		return inv.usageErrorf("--scope is user, project or local, not %q", *scope)
	case *name == "" || strings.ContainsAny(*name, " \t\n/"):
		return inv.usageErrorf("--name %q: a server's name is a word", *name)
	case *asJSON && *doRun:
		return inv.usageErrorf("--json prints the entry; --run adds it with claude: choose one")
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("where is taskd? %w", err)
	}
	if real, err := filepath.EvalSymlinks(self); err == nil {
		self = real
	}
	if *asJSON {
		entry := map[string]any{"mcpServers": map[string]any{*name: map[string]any{"command": self, "args": []string{"mcp"}}}}
		out, _ := json.MarshalIndent(entry, "", "  ")
		_, err := fmt.Fprintf(inv.stdout, "%s\n", out)
		return err
	}
	argv := []string{"claude", "mcp", "add", "--scope", *scope, *name, "--", self, "mcp"}
	if !*doRun {
		_, err := fmt.Fprintln(inv.stdout, install.ShellLine(argv...))
		return err
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = inv.stdout, inv.stderr
	if err := proc.Run(cmd); err != nil {
		var missing *exec.Error
		if errors.As(err, &missing) {
			return fmt.Errorf("claude is not on PATH (%v): install Claude Code, or add the server by hand:\n  %s", err, install.ShellLine(argv...))
		}
		return fmt.Errorf("%s: %w", install.ShellLine(argv...), err)
	}
	return nil
}
