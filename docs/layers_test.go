package docs

// A layer is a group of packages with one role in taskd.
type layer struct {
	name  string
	about string   // what the layer is (Markdown), printed above its table
	pkgs  []string // its packages, relative to the module root, in order
}

// layers is taskd's layering, top to bottom, and the order of the package
// map in architecture.md. A package imports only packages listed after it:
// in a lower layer, or further down its own. The rule holds for every
// import of the module — a package's, its in-package tests' and its
// external test package's — except the ones in exceptions. Every package
// of the module is in exactly one layer (TestLayers).
var layers = []layer{
	{
		name:  "Tools",
		about: "Programs that measure taskd or keep its pages true; none of them is part of the binary.",
		pkgs:  []string{"bench/figures", "bench/peers", "bench/throughput", "bench/cost", "bench/remote", "bench/house", "bench/taskdrun", "docs"},
	},
	{
		name: "The binary",
		about: "`taskd`, one file per command, `doc.go` the manual generated from the command table " +
			"(`go test ./cmd/taskd -run TestDocGo -update`). It is not thin: besides starting the daemon " +
			"(`taskd run`), a worker and the user service, it carries the commands that read and steer a root's " +
			"files themselves (submit, cancel, retry, resolve, restart, status, show, logs, diff, wait, doctor, " +
			"clean, …), the ones an agent runs inside its task (push, run, inbox, delegate, …), and three " +
			"fsnotify loops of its own (`status --watch`, `logs -f`, `wait`). So it imports most of the " +
			"packages below; none imports it.",
		pkgs: []string{"cmd/taskd"},
	},
	{
		name: "Views",
		about: "`taskd ui`, the full-screen view of a root: it reads the files as `taskd status` does, follows " +
			"them with fsnotify, and steers through the functions the commands call.",
		pkgs: []string{"daemon/ui"},
	},
	{
		name: "Protocols",
		about: "`taskd mcp`, the MCP server a Claude Code session starts (docs/mcp.md): flow's navigator " +
			"tools over the task files and workflow directories, and the daemon's front door, thin calls " +
			"over what the commands call; what a client may reach.",
		pkgs: []string{"daemon/mcpserver"},
	},
	{
		name: "Servers",
		about: "The long-running loops: the daemon that owns a root, and the worker that runs attempts " +
			"for a coordinator on another machine.",
		pkgs: []string{"daemon", "daemon/worker"},
	},
	{
		name: "Kinds of work",
		about: "What the loop hands a job to, by the task's kind (`job.Handler`), and the runner that sends " +
			"an attempt to a worker instead of running it here (`job.Runner`).",
		pkgs: []string{"daemon/plain", "daemon/flow", "daemon/subagent", "daemon/chain", "daemon/remote"},
	},
	{
		name: "The job",
		about: "One goroutine's work on one task: what every kind of work shares, and the interfaces the " +
			"layers above implement; `jobtest` runs jobs in a test without a daemon, for the tests of the " +
			"kinds of work.",
		pkgs: []string{"daemon/job/jobtest", "daemon/job"},
	},
	{
		name: "Services",
		about: "What the loop, the jobs and the commands use, each owning one kind of file, process or " +
			"resource; `kindtest`, the conformance suite every kind of agent passes, is imported by tests only.",
		pkgs: []string{"daemon/status", "daemon/retention", "daemon/recur", "daemon/admit", "daemon/children",
			"daemon/pausefile", "daemon/agent/kindtest", "daemon/agent", "daemon/catalog", "daemon/control", "daemon/eventlog",
			"daemon/notify", "daemon/handoff", "daemon/held", "daemon/worktree", "daemon/slots", "daemon/parallel",
			"daemon/config", "daemon/calendar", "install"},
	},
	{
		name: "The model",
		about: "What a task and a workflow are, without the daemon: the states and their transitions, " +
			"the prompt's language, the workflow engine and its built-in workflows.",
		pkgs: []string{"daemon/task", "daemon/prompt", "workflows", "navigator/flowtrace", "navigator"},
	},
	{
		name:  "Files",
		about: "Task files and a list's `.taskd` directory.",
		pkgs:  []string{"daemon/area", "taskfile"},
	},
	{
		name: "Foundations",
		about: "Rules and helpers every layer may use; `claudestub`, `disktest`, `natstest`, `proctest` and `waitfor` " +
			"are imported by tests only.",
		pkgs: []string{"internal/claudestub", "internal/natstest", "internal/proc", "internal/allowenv",
			"internal/fsroot", "internal/readable", "internal/termtext", "internal/jsonorder", "internal/clock", "internal/proctest", "internal/disktest", "internal/waitfor", "internal/syncbuf"},
	},
}

// An edge is one import: from imports to (paths relative to the module).
type edge struct{ from, to string }

// exceptions are imports allowed against the layers, each with its reason
// (printed under the package map). TestLayers fails on one that no longer
// occurs.
var exceptions = map[edge]string{
	{"navigator", "navigator/flowtrace"}: "an external test package: navigator's compatibility test replays flow's " +
		"recorded calls, which flowtrace loads and compares, and flowtrace is built on navigator",
	{"daemon/job", "daemon/job/jobtest"}: "an external test package: job's own handlers (Settle) are tested " +
		"in the harness every handler package uses, and the harness is built on job",
}
