package navigator

import "github.com/taskd/taskd/internal/jsonorder"

// Node types the navigator knows. Task, gate, subflow and any type it does
// not know are work steps; start and end are terminals; fork and join are
// control nodes.
const (
	TypeStart   = "start"
	TypeEnd     = "end"
	TypeTask    = "task"
	TypeGate    = "gate"
	TypeSubflow = "subflow"
	TypeFork    = "fork"
	TypeJoin    = "join"
)

// Join strategies. The navigator only reports them; whoever runs the
// branches decides the verdict.
const (
	StrategyAllPass = "all-pass"
	StrategyAnyPass = "any-pass"
)

// A Workflow is a parsed workflow definition in flow's JSON format. It is
// immutable once parsed and safe for concurrent use.
//
// Nodes keep the order JavaScript gives an object's keys (integer-like keys
// first in numeric order, then the others in the order they appear), because
// flow picks the first start node and orders fork branches that way. Edges
// keep their array order: the first matching edge wins everywhere.
type Workflow struct {
	ID          string // the "id" field; the store key is the file name, see workflows
	Name        string
	Description string

	order []string // node ids in JavaScript key order
	nodes map[string]*Node
	edges []Edge
	out   map[string][]int // node id → indexes into edges, in array order

	buckets map[string]Bucket // node id → guidance bucket, classified once

	hasNodes bool // "nodes" is an object
	hasEdges bool // "edges" is an array

	problems []Problem // field type problems found while parsing
}

// A Node is one node of a workflow. Absent string fields are "".
type Node struct {
	ID           string
	Type         string
	Name         string
	Description  string
	Instructions string   // replaces the baseline guidance (not in flow's schema, read by its engine)
	Agent        string   // subagent, passed through verbatim
	Stage        string   // reported in responses only
	Emoji        string   // used by diagrams only
	MaxRetries   int      // retry budget of a retry/escalate pair, see HasMaxRetries
	ContextFiles []string // files the orchestrator loads before the step

	// HasMaxRetries is false when "maxRetries" is absent or null.
	HasMaxRetries bool

	// End nodes.
	Result     string // success, failure, blocked or cancelled
	Escalation string // hitl, alert or ticket

	// Control nodes.
	Branches []Branch // fork: in JavaScript key order
	Join     string   // fork: its join node
	Fork     string   // join: its fork node
	Strategy string   // join: all-pass (the default) or any-pass

	// Workflow is the referenced workflow of a subflow node; flow never
	// runs it, and neither does taskd.
	Workflow string

	// Command is taskd's extension: a shell command that performs the step
	// deterministically (exit status 0 means passed) instead of an agent.
	// Flow ignores it.
	Command string
}

// A Branch is one branch of a fork node.
type Branch struct {
	Name           string
	EntryStep      string
	Description    string
	HasDescription bool
	// Settings are the branch's own metadata.taskd fields (taskd's
	// extension "taskd": {…}, ignored by flow): its task starts with
	// them, and takes from the forking task only the inherited fields
	// they do not set. Nil when the branch has none.
	Settings *jsonorder.Object

	raw *jsonorder.Object // the branch object as written, for error branches
}

// BranchSettings are the metadata.taskd fields a branch's "taskd" may
// set: those a branch, like a child task, inherits from the task that
// forks it unless it says otherwise (the daemon's task.Inherited, which
// a test keeps equal).
var BranchSettings = []string{"agent", "model", "cwd", "permissionMode", "tools", "disallowedTools", "timeout", "allowBypass", "worktree"}

// An Edge connects two nodes. An empty On makes it unconditional; otherwise
// it is taken for that exact result.
type Edge struct {
	From  string
	To    string
	On    string
	Label string
}

// Nodes returns the node ids in the order flow sees them. The slice must
// not be modified.
func (wf *Workflow) Nodes() []string { return wf.order }

// Node returns the node with the given id, or nil.
func (wf *Workflow) Node(id string) *Node { return wf.nodes[id] }

// Edges returns the edges in array order. The slice must not be modified.
func (wf *Workflow) Edges() []Edge { return wf.edges }

// Outgoing returns the edges leaving id, in array order.
func (wf *Workflow) Outgoing(id string) []Edge {
	idx := wf.out[id]
	out := make([]Edge, len(idx))
	for i, j := range idx {
		out[i] = wf.edges[j]
	}
	return out
}

// Start returns the id of the first start node in key order, or "" if there
// is none.
func (wf *Workflow) Start() string {
	for _, id := range wf.order {
		if wf.nodes[id].Type == TypeStart {
			return id
		}
	}
	return ""
}

// IsTerminal reports whether n is a start or end node.
func (n *Node) IsTerminal() bool { return n.Type == TypeStart || n.Type == TypeEnd }

// IsControl reports whether n is a fork or join node.
func (n *Node) IsControl() bool { return n.Type == TypeFork || n.Type == TypeJoin }

// IsWork reports whether n is a work step: task, gate, subflow, or a type
// the navigator does not know.
func (n *Node) IsWork() bool { return !n.IsTerminal() && !n.IsControl() }

// Terminal classifies n as flow does: start nodes are "start"; end
// nodes are "hitl" when they escalate to a human, else "success" when their
// result is success, else "failure"; everything else is not terminal.
func (n *Node) Terminal() Terminal {
	switch n.Type {
	case TypeStart:
		return TerminalStart
	case TypeEnd:
		switch {
		case n.Escalation == "hitl":
			return TerminalHITL
		case n.Result == "success":
			return TerminalSuccess
		default:
			return TerminalFailure
		}
	}
	return TerminalNone
}

// isEnd reports whether id names an end node.
func (wf *Workflow) isEnd(id string) bool {
	n := wf.nodes[id]
	return n != nil && n.Type == TypeEnd
}
