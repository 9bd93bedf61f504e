package navigator

import (
	"errors"
	"fmt"
)

// Kinds of errors Navigate returns in place of a response. Each error's
// message is flow's exact text; errors.Is tells the kinds apart.
var (
	// ErrTaskFile: the task file is missing or unreadable. Navigate never
	// reads files; callers report it with TaskFileError.
	ErrTaskFile = errors.New("task file not found")
	// ErrNoMetadata: the task file has no metadata.
	ErrNoMetadata = errors.New("task has no metadata")
	// ErrNoWorkflowType: neither the input nor the metadata names a workflow.
	ErrNoWorkflowType = errors.New("no workflow type")
	// ErrUnknownWorkflow: the catalog has no workflow with that id.
	ErrUnknownWorkflow = errors.New("unknown workflow")
	// ErrUnknownStep: a step id, given or stored, names no node.
	ErrUnknownStep = errors.New("unknown step")
	// ErrBadStartStep: a step id names a start or end node.
	ErrBadStartStep = errors.New("cannot start at a terminal node")
	// ErrBrokenWorkflow: the workflow lacks something navigation needs (nodes,
	// edges, a start node, an edge target). Validate reports these up front.
	ErrBrokenWorkflow = errors.New("broken workflow")
)

// navError is a thrown error: flow's message with a kind to match on.
type navError struct {
	kind error
	msg  string
}

func (e *navError) Error() string        { return e.msg }
func (e *navError) Unwrap() error        { return e.kind }
func (e *navError) Is(target error) bool { return target == e.kind }

func fail(kind error, format string, args ...any) error {
	return &navError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// TaskFileError returns the error flow reports for a task file it cannot
// read or parse: "Task file not found: <path>". It satisfies
// errors.Is(err, ErrTaskFile).
func TaskFileError(path string) error {
	return fail(ErrTaskFile, "Task file not found: %s", path)
}

// NoMatchError is flow's returned error object: the current
// step has no edge for the result. It is an answer, not a failure of the
// call: nothing is written, and its JSON form is what flow returns:
//
//	{"error": "No matching edge from '<step>' with result '<result>'", "currentStep": <step>, "evaluation": {…}}
type NoMatchError struct {
	CurrentStep string // the step left, or the join on a fork's verdict
	Result      string
	Evaluation  Evaluation
}

func (e *NoMatchError) Error() string {
	return fmt.Sprintf("No matching edge from '%s' with result '%s'", e.CurrentStep, e.Result)
}

// Evaluation is flow's edge evaluation when it finds no next step.
type Evaluation struct {
	// Action is "no_outgoing_edges" or "no_matching_edge".
	Action      string
	CurrentStep string
	// The rest is set for no_matching_edge only.
	Result         string
	RetryCount     int
	AvailableEdges []EdgeRef
}

// EdgeRef is an outgoing edge listed in an Evaluation.
type EdgeRef struct {
	To string
	On string
}

// Evaluation actions.
const (
	NoOutgoingEdges = "no_outgoing_edges"
	NoMatchingEdge  = "no_matching_edge"
)
