package navigator_test

import (
	"errors"
	"testing"

	"github.com/taskd/taskd/navigator"
)

// outcome is what the table tests compare: the parts of a navigation that
// the rules decide.
type outcome struct {
	Err       string // a thrown error's message
	NoMatch   string // a returned error object's message
	Action    navigator.Action
	Step      string
	Terminal  navigator.Terminal
	Retries   int // metadata.retryCount
	Retried   bool
	Continued bool
	Autonomy  string // metadata.autonomy: "" absent, "true", "false"
	Write     navigator.WriteMode
}

func navigate(t *testing.T, cat navigator.Catalog, tk *navigator.Task, in navigator.Input) outcome {
	t.Helper()
	resp, wt, err := navigator.Navigate(cat, tk, in)
	var nm *navigator.NoMatchError
	if errors.As(err, &nm) {
		return outcome{NoMatch: nm.Error()}
	}
	if err != nil {
		return outcome{Err: err.Error()}
	}
	o := outcome{Action: resp.Action, Step: resp.CurrentStep, Terminal: resp.Terminal, Retries: resp.Metadata.RetryCount,
		Retried: resp.RetriesIncremented, Continued: resp.AutonomyContinued}
	if a := resp.Metadata.Autonomy; a != nil {
		o.Autonomy = map[bool]string{true: "true", false: "false"}[*a]
	}
	if wt != nil {
		o.Write = wt.Mode
	}
	if (tk == nil) != (wt == nil) {
		t.Errorf("write-through is %v with task %v: want one exactly when there is a task", wt, tk)
	}
	return o
}

// Each case is one rule of flow's Navigate, stated in its name; the
// comments group them by mode.
var navigateTests = []struct {
	name string
	task *navigator.Task
	in   navigator.Input
	want outcome
}{
	// Inputs
	{"no workflow type throws", nil, navigator.Input{},
		outcome{Err: "workflowType is required (either directly or via task metadata)"}},
	{"unknown workflow throws", nil, navigator.Input{WorkflowType: "nope"},
		outcome{Err: "Workflow 'nope' not found. Use ListWorkflows to see available workflows."}},
	{"a task without metadata throws", &navigator.Task{Stem: "7"}, navigator.Input{WorkflowType: "ship"},
		outcome{Err: "Task has no metadata"}},
	{"the task's metadata overrides the workflowType input, even when it has none", task(), navigator.Input{WorkflowType: "ship"},
		outcome{Err: "workflowType is required (either directly or via task metadata)"}},
	{"a workflow without nodes throws", nil, navigator.Input{WorkflowType: "no-nodes"},
		outcome{Err: "Workflow 'no-nodes' must have nodes"}},

	// Start mode
	{"start goes to the target of the start node's first edge", nil, navigator.Input{WorkflowType: "ship"},
		outcome{Action: navigator.ActionStart, Step: "analyze_request"}},
	{"start ignores the result and records no autonomy", nil, navigator.Input{WorkflowType: "ship", Result: "failed", Autonomy: ptr(true)},
		outcome{Action: navigator.ActionStart, Step: "analyze_request"}},
	{"the first start node in JavaScript key order wins (integer keys first)", nil, navigator.Input{WorkflowType: "edges"},
		outcome{Action: navigator.ActionStart, Step: "a"}},
	{"start at a step", nil, navigator.Input{WorkflowType: "ship", StepID: "run_tests"},
		outcome{Action: navigator.ActionStart, Step: "run_tests"}},
	{"start at a fork answers with the fork", nil, navigator.Input{WorkflowType: "ship", StepID: "fork_checks"},
		outcome{Action: navigator.ActionFork, Step: "fork_checks"}},
	{"start at a join answers with the join", nil, navigator.Input{WorkflowType: "ship", StepID: "join_checks"},
		outcome{Action: navigator.ActionJoin, Step: "join_checks"}},
	{"start at an unknown step throws", nil, navigator.Input{WorkflowType: "ship", StepID: "nope"},
		outcome{Err: "Step 'nope' not found in workflow 'ship'"}},
	{"start at the start node throws", nil, navigator.Input{WorkflowType: "ship", StepID: "start"},
		outcome{Err: "Cannot start at start node 'start'. Provide a task, gate, or fork/join step."}},
	{"start at a HITL end throws", nil, navigator.Input{WorkflowType: "ship", StepID: "stuck"},
		outcome{Err: "Cannot start at end node 'stuck'. Provide a task, gate, or fork/join step."}},
	{"a task file without a current step starts, and nothing is written", task("workflowType", "ship"), navigator.Input{Result: "passed"},
		outcome{Action: navigator.ActionStart, Step: "analyze_request", Write: navigator.WriteNone}},
	{"a task file without a current step honours the step id", task("workflowType", "ship"), navigator.Input{StepID: "publish"},
		outcome{Action: navigator.ActionStart, Step: "publish", Write: navigator.WriteNone}},
	{"no start node throws", nil, navigator.Input{WorkflowType: "no-start"},
		outcome{Err: "Workflow 'no-start' has no start node"}},
	{"no edge out of the start node throws", nil, navigator.Input{WorkflowType: "start-out"},
		outcome{Err: "No edge from start step in workflow 'start-out'"}},
	{"a missing first step throws", nil, navigator.Input{WorkflowType: "dangling"},
		outcome{Err: "First step 'ghost' not found in workflow"}},
	{"no edges array fails as flow's engine does", nil, navigator.Input{WorkflowType: "no-edges"},
		outcome{Err: "Cannot read properties of undefined (reading 'find')"}},

	// Current mode
	{"current reports the stored step and count", at("ship", "run_tests", 2), navigator.Input{},
		outcome{Action: navigator.ActionCurrent, Step: "run_tests", Retries: 2, Write: navigator.WriteNone}},
	{"current at an end node is terminal", at("ship", "stuck", 1), navigator.Input{},
		outcome{Action: navigator.ActionCurrent, Step: "stuck", Terminal: navigator.TerminalHITL, Retries: 1, Write: navigator.WriteNone}},
	{"current at the start node is terminal start", at("ship", "start", 0), navigator.Input{},
		outcome{Action: navigator.ActionCurrent, Step: "start", Terminal: navigator.TerminalStart, Write: navigator.WriteNone}},
	{"current at a fork keeps the stored count", at("ship", "fork_checks", 2), navigator.Input{},
		outcome{Action: navigator.ActionFork, Step: "fork_checks", Retries: 2, Write: navigator.WriteNone}},
	{"current at an unknown step throws", at("ship", "ghost", 0), navigator.Input{},
		outcome{Err: "Step 'ghost' not found in workflow 'ship'"}},
	{"current does not record autonomy", at("ship", "implement", 0), navigator.Input{Autonomy: ptr(true)},
		outcome{Action: navigator.ActionCurrent, Step: "implement", Write: navigator.WriteNone}},

	// Edge evaluation
	{"a conditional edge beats an earlier unconditional one", at("edges", "a", 0), navigator.Input{Result: "passed"},
		outcome{Action: navigator.ActionAdvance, Step: "c", Write: navigator.WriteFull}},
	{"failed on a step with only an unconditional edge for it advances", at("edges", "a", 1), navigator.Input{Result: "failed"},
		outcome{Action: navigator.ActionAdvance, Step: "b", Retries: 1, Write: navigator.WriteFull}},
	{"any other result follows the unconditional edge", at("edges", "a", 0), navigator.Input{Result: "maybe"},
		outcome{Action: navigator.ActionAdvance, Step: "b", Write: navigator.WriteFull}},
	{"a result without an edge is an error object", at("edges", "9", 0), navigator.Input{Result: "passed"},
		outcome{NoMatch: "No matching edge from '9' with result 'passed'"}},
	{"a step without edges is an error object", at("ship", "done", 0), navigator.Input{Result: "passed"},
		outcome{NoMatch: "No matching edge from 'done' with result 'passed'"}},
	{"an unknown current step with a result is an error object", at("ship", "ghost", 0), navigator.Input{Result: "passed"},
		outcome{NoMatch: "No matching edge from 'ghost' with result 'passed'"}},
	{"a failed gate retries while the count is below maxRetries", at("ship", "run_tests", 1), navigator.Input{Result: "failed"},
		outcome{Action: navigator.ActionRetry, Step: "implement", Retries: 2, Retried: true, Write: navigator.WriteFull}},
	{"a failed gate escalates once the count reaches maxRetries, keeping the count", at("ship", "run_tests", 2), navigator.Input{Result: "failed"},
		outcome{Action: navigator.ActionEscalate, Step: "stuck", Terminal: navigator.TerminalHITL, Retries: 2, Write: navigator.WriteFull}},
	{"maxRetries 0 escalates at the first failure", at("edges", "c", 0), navigator.Input{Result: "failed"},
		outcome{Action: navigator.ActionEscalate, Step: "h", Terminal: navigator.TerminalHITL, Write: navigator.WriteFull}},
	{"a failed self-loop without an escalation edge resets the count", at("edges", "loop", 2), navigator.Input{Result: "failed"},
		outcome{Action: navigator.ActionAdvance, Step: "loop", Write: navigator.WriteFull}},
	{"a failed edge to a non-HITL end is an advance", at("ship", "publish", 1), navigator.Input{Result: "failed"},
		outcome{Action: navigator.ActionAdvance, Step: "abandoned", Terminal: navigator.TerminalFailure, Write: navigator.WriteFull}},

	// Advance
	{"an unconditional advance keeps the count", at("ship", "implement", 1), navigator.Input{Result: "passed"},
		outcome{Action: navigator.ActionAdvance, Step: "run_tests", Retries: 1, Write: navigator.WriteFull}},
	{"a conditional advance resets the count", at("ship", "publish", 2), navigator.Input{Result: "passed"},
		outcome{Action: navigator.ActionAdvance, Step: "done", Terminal: navigator.TerminalSuccess, Write: navigator.WriteFull}},
	{"arriving at a fork writes metadata only and resets the count", at("ship", "run_tests", 1), navigator.Input{Result: "passed"},
		outcome{Action: navigator.ActionFork, Step: "fork_checks", Write: navigator.WriteMetadata}},
	{"a branch reaching the join is told so", at("ship", "write_docs", 1), navigator.Input{Result: "passed"},
		outcome{Action: navigator.ActionJoin, Step: "join_checks", Write: navigator.WriteMetadata}},
	{"arriving at a join resets the count", at("ship", "review_code", 1), navigator.Input{Result: "passed"},
		outcome{Action: navigator.ActionJoin, Step: "join_checks", Write: navigator.WriteMetadata}},
	{"HITL resume advances and resets the count", at("ship", "stuck", 5), navigator.Input{Result: "passed"},
		outcome{Action: navigator.ActionAdvance, Step: "implement", Write: navigator.WriteFull}},
	{"failed at a HITL end without a failed edge is an error object", at("ship", "stuck", 0), navigator.Input{Result: "failed"},
		outcome{NoMatch: "No matching edge from 'stuck' with result 'failed'"}},
	{"a HITL node's own retry is reported as an advance with retriesIncremented", at("edges", "h", 0), navigator.Input{Result: "failed"},
		outcome{Action: navigator.ActionAdvance, Step: "a", Retries: 1, Retried: true, Write: navigator.WriteFull}},
	{"a HITL node's own escalation is reported as an advance", at("edges", "h", 1), navigator.Input{Result: "failed"},
		outcome{Action: navigator.ActionAdvance, Step: "f", Terminal: navigator.TerminalFailure, Retries: 1, Write: navigator.WriteFull}},
	{"a join's failed edge to HITL is an escalation", at("ship", "join_checks", 0), navigator.Input{Result: "failed"},
		outcome{Action: navigator.ActionEscalate, Step: "stuck", Terminal: navigator.TerminalHITL, Write: navigator.WriteFull}},
	{"a missing next step throws", at("dangling", "a", 0), navigator.Input{Result: "passed"},
		outcome{Err: "Next step 'ghost' not found in workflow"}},
	{"advancing without an edges array throws", at("no-edges", "a", 0), navigator.Input{Result: "passed"},
		outcome{Err: "Workflow no-edges must have edges array"}},

	// A verdict on a fork
	{"a passed verdict on the fork continues after the join with count 0", at("ship", "fork_checks", 2), navigator.Input{Result: "passed"},
		outcome{Action: navigator.ActionAdvance, Step: "publish", Write: navigator.WriteFull}},
	{"a failed verdict on the fork reaches HITL as an advance", at("ship", "fork_checks", 0), navigator.Input{Result: "failed"},
		outcome{Action: navigator.ActionAdvance, Step: "stuck", Terminal: navigator.TerminalHITL, Write: navigator.WriteFull}},
	{"a verdict the join has no edge for is an error object at the join", at("ship", "fork_checks", 0), navigator.Input{Result: "maybe"},
		outcome{NoMatch: "No matching edge from 'join_checks' with result 'maybe'"}},
	{"a verdict on a fork whose join is missing throws", at("dangling", "fork", 0), navigator.Input{Result: "passed"},
		outcome{Err: "Join step 'nope' not found in workflow 'dangling'"}},
	{"a verdict on a fork does not continue autonomously", at("stages", "fork", 0), navigator.Input{Result: "passed", Autonomy: ptr(true)},
		outcome{Action: navigator.ActionAdvance, Step: "three_done", Terminal: navigator.TerminalSuccess, Autonomy: "true", Write: navigator.WriteFull}},

	// Autonomy and stage boundaries
	{"without autonomy a stage boundary is a success end", at("ship", "analyze_request", 0), navigator.Input{Result: "passed"},
		outcome{Action: navigator.ActionAdvance, Step: "planned", Terminal: navigator.TerminalSuccess, Write: navigator.WriteFull}},
	{"with autonomy a stage boundary is crossed", at("ship", "analyze_request", 0), navigator.Input{Result: "passed", Autonomy: ptr(true)},
		outcome{Action: navigator.ActionAdvance, Step: "implement", Continued: true, Autonomy: "true", Write: navigator.WriteFull}},
	{"autonomy is read from the metadata", at("ship", "analyze_request", 0, "autonomy", true), navigator.Input{Result: "passed"},
		outcome{Action: navigator.ActionAdvance, Step: "implement", Continued: true, Autonomy: "true", Write: navigator.WriteFull}},
	{"a boundary advanced by hand resets the count", at("ship", "planned", 1), navigator.Input{Result: "passed"},
		outcome{Action: navigator.ActionAdvance, Step: "implement", Write: navigator.WriteFull}},
	{"autonomy crosses one boundary per call", at("stages", "one", 0), navigator.Input{Result: "passed", Autonomy: ptr(true)},
		outcome{Action: navigator.ActionAdvance, Step: "two", Continued: true, Autonomy: "true", Write: navigator.WriteFull}},
	{"an end with only an unconditional edge is no boundary", at("stages", "join", 0), navigator.Input{Result: "passed", Autonomy: ptr(true)},
		outcome{Action: navigator.ActionAdvance, Step: "three_done", Terminal: navigator.TerminalSuccess, Autonomy: "true", Write: navigator.WriteFull}},
	{"HITL ends never continue", at("ship", "run_tests", 2), navigator.Input{Result: "failed", Autonomy: ptr(true)},
		outcome{Action: navigator.ActionEscalate, Step: "stuck", Terminal: navigator.TerminalHITL, Retries: 2, Autonomy: "true", Write: navigator.WriteFull}},
	{"autonomy is recorded on every advance while on", at("ship", "implement", 0), navigator.Input{Result: "passed", Autonomy: ptr(true)},
		outcome{Action: navigator.ActionAdvance, Step: "run_tests", Autonomy: "true", Write: navigator.WriteFull}},
	{"autonomy is recorded on metadata-only writes", at("ship", "run_tests", 0), navigator.Input{Result: "passed", Autonomy: ptr(true)},
		outcome{Action: navigator.ActionFork, Step: "fork_checks", Autonomy: "true", Write: navigator.WriteMetadata}},

	// Deviations (docs/navigator.md)
	{"deviation: autonomy into a fork answers with the fork", at("stages", "two", 0), navigator.Input{Result: "passed", Autonomy: ptr(true)},
		outcome{Action: navigator.ActionFork, Step: "fork", Continued: true, Autonomy: "true", Write: navigator.WriteMetadata}},
	{"deviation: an explicit autonomy=false switches a stored true off", at("ship", "analyze_request", 0, "autonomy", true), navigator.Input{Result: "passed", Autonomy: ptr(false)},
		outcome{Action: navigator.ActionAdvance, Step: "planned", Terminal: navigator.TerminalSuccess, Autonomy: "false", Write: navigator.WriteFull}},
	{"deviation: autonomy=false without a stored true writes nothing about it", at("ship", "implement", 0), navigator.Input{Result: "passed", Autonomy: ptr(false)},
		outcome{Action: navigator.ActionAdvance, Step: "run_tests", Write: navigator.WriteFull}},
	{"deviation: a string retryCount counts as its number", at("ship", "run_tests", "1"), navigator.Input{Result: "failed"},
		outcome{Action: navigator.ActionRetry, Step: "implement", Retries: 2, Retried: true, Write: navigator.WriteFull}},
	{"deviation: a null retryCount counts as 0", at("ship", "implement", nil), navigator.Input{},
		outcome{Action: navigator.ActionCurrent, Step: "implement", Write: navigator.WriteNone}},
	{"deviation: a string retryCount is compared as a number", at("ship", "run_tests", "2"), navigator.Input{Result: "failed"},
		outcome{Action: navigator.ActionEscalate, Step: "stuck", Terminal: navigator.TerminalHITL, Retries: 2, Write: navigator.WriteFull}},
}

func TestNavigate(t *testing.T) {
	cat := mustCatalog(t)
	for _, tt := range navigateTests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := navigate(t, cat, tt.task, tt.in), tt.want; got != want {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestNavigate_Errors checks that thrown errors match their kinds and that
// returned error objects are told apart from them.
func TestNavigate_Errors(t *testing.T) {
	cat := mustCatalog(t)
	tests := []struct {
		task *navigator.Task
		in   navigator.Input
		kind error
	}{
		{nil, navigator.Input{}, navigator.ErrNoWorkflowType},
		{nil, navigator.Input{WorkflowType: "nope"}, navigator.ErrUnknownWorkflow},
		{&navigator.Task{Stem: "7"}, navigator.Input{}, navigator.ErrNoMetadata},
		{nil, navigator.Input{WorkflowType: "ship", StepID: "x"}, navigator.ErrUnknownStep},
		{nil, navigator.Input{WorkflowType: "ship", StepID: "done"}, navigator.ErrBadStartStep},
		{nil, navigator.Input{WorkflowType: "no-start"}, navigator.ErrBrokenWorkflow},
	}
	for _, tt := range tests {
		_, _, err := navigator.Navigate(cat, tt.task, tt.in)
		if !errors.Is(err, tt.kind) {
			t.Errorf("Navigate(%+v) = %v, want an error of kind %v", tt.in, err, tt.kind)
		}
		var nm *navigator.NoMatchError
		if errors.As(err, &nm) {
			t.Errorf("Navigate(%+v) = %v, an error object, want a thrown error", tt.in, err)
		}
	}
	if err := navigator.TaskFileError("/x/7.json"); !errors.Is(err, navigator.ErrTaskFile) || err.Error() != "Task file not found: /x/7.json" {
		t.Errorf("TaskFileError = %v", err)
	}
}

// TestTerminal pins flow's terminal classification.
func TestTerminal(t *testing.T) {
	tests := []struct {
		node navigator.Node
		want navigator.Terminal
	}{
		{navigator.Node{Type: "start"}, navigator.TerminalStart},
		{navigator.Node{Type: "end", Result: "success"}, navigator.TerminalSuccess},
		{navigator.Node{Type: "end", Result: "success", Escalation: "alert"}, navigator.TerminalSuccess},
		{navigator.Node{Type: "end", Result: "success", Escalation: "hitl"}, navigator.TerminalHITL},
		{navigator.Node{Type: "end", Result: "blocked", Escalation: "hitl"}, navigator.TerminalHITL},
		{navigator.Node{Type: "end", Escalation: "hitl"}, navigator.TerminalHITL},
		{navigator.Node{Type: "end", Result: "blocked"}, navigator.TerminalFailure},
		{navigator.Node{Type: "end", Result: "cancelled"}, navigator.TerminalFailure},
		{navigator.Node{Type: "end"}, navigator.TerminalFailure},
		{navigator.Node{Type: "task"}, navigator.TerminalNone},
		{navigator.Node{Type: "gate"}, navigator.TerminalNone},
		{navigator.Node{Type: "fork"}, navigator.TerminalNone},
		{navigator.Node{Type: "join"}, navigator.TerminalNone},
		{navigator.Node{Type: "custom"}, navigator.TerminalNone},
	}
	for _, tt := range tests {
		if got := tt.node.Terminal(); got != tt.want {
			t.Errorf("%+v.Terminal() = %q, want %q", tt.node, got, tt.want)
		}
	}
}
