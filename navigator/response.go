package navigator

import "github.com/taskd/taskd/internal/jsonorder"

// Action says what a Navigate call did.
type Action string

// Actions of a response.
const (
	ActionStart    Action = "start"    // Start mode: the first step
	ActionCurrent  Action = "current"  // Current mode: the stored step
	ActionAdvance  Action = "advance"  // moved on (including HITL resumes)
	ActionRetry    Action = "retry"    // a failed gate sent the task back
	ActionEscalate Action = "escalate" // moved to a HITL end
	ActionFork     Action = "fork"     // at a fork: run the branches
	ActionJoin     Action = "join"     // at a join: a branch is done
)

// Terminal classifies the node a response is at (see Node.Terminal).
type Terminal string

// Terminal types; TerminalNone is JSON null.
const (
	TerminalNone    Terminal = ""
	TerminalStart   Terminal = "start"
	TerminalSuccess Terminal = "success"
	TerminalHITL    Terminal = "hitl"
	TerminalFailure Terminal = "failure"
)

// A Response is the answer to a Navigate call. Its JSON form (MarshalJSON)
// has flow's fields in flow's order, with null and absent exactly as flow
// writes them. String fields documented as "null when
// empty" are JSON null when "".
type Response struct {
	CurrentStep        string
	Stage              string            // null when empty
	Subagent           string            // null when empty
	StepInstructions   *StepInstructions // nil (null) at start, end, fork and join nodes
	Terminal           Terminal
	Action             Action
	RetriesIncremented bool
	// AutonomyContinued is true when autonomy carried the task across a
	// stage boundary (an end node with an on:"passed" edge) in this call.
	AutonomyContinued bool
	MaxRetries        int
	// OrchestratorInstructions is the prompt for the step: null when empty
	// (terminal and control nodes).
	OrchestratorInstructions string
	Metadata                 Metadata
	SourceRoot               string // null when empty
	Fork                     *Fork  // set for ActionFork only
	Join                     *Join  // set for ActionJoin only

	// Command is the step's "command" (taskd's extension): run it instead
	// of an agent. It is not part of flow's response and not encoded.
	Command string
}

// StepInstructions describe a work step.
type StepInstructions struct {
	Name        string // the node's name, or its id
	Description string // null when empty; ./ paths resolved
	Guidance    string // the node's instructions, or taskd's paragraph for the kind of step
}

// Metadata is the flow state a response reports and the write-through
// merges into the task's metadata.
type Metadata struct {
	WorkflowType string
	CurrentStep  string
	RetryCount   int
	// Autonomy is nil when not reported (absent from JSON). It is true when
	// an advance ran with autonomy, and false when an explicit
	// autonomy=false switched a stored true off (a deviation from flow).
	Autonomy *bool
}

// Fork is the payload of a fork response.
type Fork struct {
	Branches     []ForkBranch // in the fork's branch order
	JoinStep     string
	JoinStrategy string
}

// A ForkBranch is one branch of a fork response, enriched from its entry
// node so that a single-step branch can run without another Navigate call.
type ForkBranch struct {
	Name           string
	EntryStep      string
	Description    string // the branch's description; see HasDescription
	HasDescription bool   // absent from JSON when false

	Subagent                 string // null when empty
	Stage                    string // null when empty
	StepInstructions         *StepInstructions
	OrchestratorInstructions string
	MaxRetries               int
	// MultiStep is true when the entry step has an edge to somewhere other
	// than the fork's join: the branch must run its own Navigate loop.
	MultiStep bool
	Metadata  Metadata // the child task's starting state
	Command   string   // the entry step's "command"; not encoded
	// Settings are the branch's own metadata.taskd fields (Branch); not
	// encoded.
	Settings *jsonorder.Object

	// Error is set, and the fields above are not, when the entry step does
	// not exist: "Entry step '<id>' not found".
	Error string
	def   *Branch
}

// Join is the payload of a join response.
type Join struct {
	ForkStep string
	Strategy string
}

// WriteMode says how much of the task file a navigation changes.
type WriteMode int

// Write modes.
const (
	WriteNone     WriteMode = iota // Start and Current mode, errors
	WriteMetadata                  // arrival at a fork or join: id and metadata only
	WriteFull                      // every other advance: also subject, activeForm, description
)

// MarshalText encodes the mode as its name: none, metadata or full.
func (m WriteMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

func (m WriteMode) String() string {
	switch m {
	case WriteMetadata:
		return "metadata"
	case WriteFull:
		return "full"
	}
	return "none"
}

// A WriteThrough is what a navigation changes in the task file,
// as data: the caller applies it inside its own locked read-modify-write.
type WriteThrough struct {
	Mode WriteMode
	// ID is the task file's stem; it replaces (or adds) the task's "id".
	ID string
	// IDWarning is flow's warning when the file's id differed from ID,
	// empty otherwise.
	IDWarning string
	// Metadata is shallow-merged into the task's metadata in this order:
	// existing keys keep their position, new keys are appended.
	Metadata []Field
	// Full mode only.
	Subject    string
	ActiveForm string
	// Description replaces the task's description when SetDescription is
	// true (full mode, work steps).
	Description    string
	SetDescription bool
}

// A Field is one metadata key and its value: a string, an int or a bool.
type Field struct {
	Key   string
	Value any
}

// Fields returns m as metadata fields in flow's assignment order.
func (m *Metadata) Fields() []Field {
	f := make([]Field, 3, 4)
	f[0] = Field{"workflowType", m.WorkflowType}
	f[1] = Field{"currentStep", m.CurrentStep}
	f[2] = Field{"retryCount", m.RetryCount}
	if m.Autonomy != nil {
		f = append(f, Field{"autonomy", *m.Autonomy})
	}
	return f
}
