package navigator

// A Catalog finds workflows by id.
type Catalog interface {
	// Lookup returns the workflow registered under id and the directory its
	// "./" paths resolve against ("" for none). ok is false when there is no
	// such workflow.
	Lookup(id string) (wf *Workflow, sourceRoot string, ok bool)
}

// A Task is the state of a task file that Navigate reads: plain data, as
// decoded from the file by the caller.
type Task struct {
	// Stem is the file name without ".json". Flow writes it as the task's id.
	Stem string
	// ID is the file's "id" value as decoded and HasID whether the key is
	// present; they only decide whether the write-through warns.
	ID    any
	HasID bool
	// Metadata is the "metadata" object: keys to decoded JSON values
	// (strings, bools, nil, numbers as json.Number, float64 or int, anything
	// else for objects and arrays). It is nil when the file has no metadata
	// or it is null, false, 0 or "" (flow's "Task has no metadata"); use an
	// empty map for any other value that is not an object.
	Metadata map[string]any
}

// Input holds the parameters of a Navigate call. Empty strings mean absent.
type Input struct {
	WorkflowType string // ignored when there is a task: its metadata decides
	Result       string // "passed" or "failed"; any other string only follows unconditional edges
	Description  string // the user's description; falls back to metadata.userDescription
	StepID       string // Start mode only: the step to start at
	Autonomy     *bool  // nil: use metadata.autonomy
	ProjectRoot  string // context_files that are not "./" resolve against it
}

// Navigate performs one call of flow's Navigate against the
// workflows of cat. task is nil when there is no task file. It is pure: it
// reads nothing, writes nothing, and is safe for concurrent use.
//
// The three modes are Start (the task has no current step: the first step,
// nothing to write), Current (no result: the stored step, nothing to write)
// and Advance (a result: the next step, and a write-through for the task).
// The write-through is nil without a task.
//
// A step that has no edge for the result yields a *NoMatchError: flow's
// returned error object, with nothing to write. Every other error is what
// flow throws, with flow's message; errors.Is matches it against the Err*
// kinds.
func Navigate(cat Catalog, task *Task, in Input) (*Response, *WriteThrough, error) {
	n := &nav{
		workflowType: in.WorkflowType,
		desc:         in.Description,
		projectRoot:  in.ProjectRoot,
		result:       in.Result,
		task:         task,
	}
	autonomy := in.Autonomy != nil && *in.Autonomy
	var currentStep string
	var retryCount int
	if task != nil {
		md := task.Metadata
		if md == nil {
			return nil, nil, fail(ErrNoMetadata, "Task has no metadata")
		}
		n.workflowType = text(md["workflowType"])
		currentStep = text(md["currentStep"])
		retryCount = count(md["retryCount"])
		if n.desc == "" {
			n.desc = text(md["userDescription"])
		}
		n.userDesc = text(md["userDescription"])
		stored := truthy(md["autonomy"])
		if in.Autonomy == nil {
			autonomy = stored
		}
		// Deviation: an explicit false switches a stored true off.
		n.clearAutonomy = in.Autonomy != nil && !*in.Autonomy && stored
	}
	n.autonomy = autonomy
	if n.workflowType == "" {
		return nil, nil, fail(ErrNoWorkflowType, "workflowType is required (either directly or via task metadata)")
	}
	wf, root, ok := cat.Lookup(n.workflowType)
	if !ok || wf == nil {
		return nil, nil, fail(ErrUnknownWorkflow, "Workflow '%s' not found. Use ListWorkflows to see available workflows.", n.workflowType)
	}
	if !wf.hasNodes {
		return nil, nil, fail(ErrBrokenWorkflow, "Workflow '%s' must have nodes", n.workflowType)
	}
	n.wf, n.sourceRoot = wf, root
	switch {
	case currentStep == "":
		resp, err := n.start(in.StepID)
		return resp, n.noWrite(), err
	case n.result == "":
		resp, err := n.current(currentStep, retryCount)
		return resp, n.noWrite(), err
	default:
		return n.advance(currentStep, retryCount)
	}
}

// nav carries one Navigate call.
type nav struct {
	wf            *Workflow
	workflowType  string
	sourceRoot    string
	projectRoot   string
	desc          string // effective description: the input's, else metadata.userDescription
	userDesc      string // metadata.userDescription, for the subject
	result        string
	autonomy      bool
	clearAutonomy bool
	task          *Task
}

func (n *nav) noWrite() *WriteThrough {
	if n.task == nil {
		return nil
	}
	return &WriteThrough{Mode: WriteNone, ID: n.task.Stem}
}

// start implements Start mode: nothing is written and the
// result is ignored.
func (n *nav) start(stepID string) (*Response, error) {
	wf := n.wf
	target := stepID
	if stepID != "" {
		node := wf.nodes[stepID]
		if node == nil {
			return nil, fail(ErrUnknownStep, "Step '%s' not found in workflow '%s'", stepID, n.workflowType)
		}
		if node.IsTerminal() {
			return nil, fail(ErrBadStartStep, "Cannot start at %s node '%s'. Provide a task, gate, or fork/join step.", node.Type, stepID)
		}
	} else {
		start := wf.Start()
		if start == "" {
			return nil, fail(ErrBrokenWorkflow, "Workflow '%s' has no start node", n.workflowType)
		}
		if !wf.hasEdges {
			return nil, fail(ErrBrokenWorkflow, "Cannot read properties of undefined (reading 'find')")
		}
		idx := wf.out[start]
		if len(idx) == 0 {
			return nil, fail(ErrBrokenWorkflow, "No edge from start step in workflow '%s'", n.workflowType)
		}
		target = wf.edges[idx[0]].To
		if wf.nodes[target] == nil {
			return nil, fail(ErrBrokenWorkflow, "First step '%s' not found in workflow", target)
		}
	}
	if node := wf.nodes[target]; node.IsControl() {
		return n.control(node, 0), nil
	}
	return n.step(wf.nodes[target], ActionStart, 0, false), nil
}

// current implements Current mode: the stored step as it is.
func (n *nav) current(currentStep string, retryCount int) (*Response, error) {
	node := n.wf.nodes[currentStep]
	if node == nil {
		return nil, fail(ErrUnknownStep, "Step '%s' not found in workflow '%s'", currentStep, n.workflowType)
	}
	if node.IsControl() {
		return n.control(node, retryCount), nil
	}
	return n.step(node, ActionCurrent, retryCount, false), nil
}

// advance implements Advance mode.
func (n *nav) advance(currentStep string, retryCount int) (*Response, *WriteThrough, error) {
	wf := n.wf
	if cur := wf.nodes[currentStep]; cur != nil && cur.Type == TypeFork && cur.Join != "" {
		return n.forkVerdict(cur)
	}
	if !wf.hasEdges {
		return nil, nil, fail(ErrBrokenWorkflow, "Workflow %s must have edges array", n.workflowType)
	}
	ev := wf.evaluate(currentStep, n.result, retryCount)
	if ev.next == "" {
		return nil, nil, ev.noMatch(currentStep, n.result)
	}
	next := wf.nodes[ev.next]
	if next == nil {
		return nil, nil, fail(ErrBrokenWorkflow, "Next step '%s' not found in workflow", ev.next)
	}
	if next.IsControl() {
		return n.arrive(n.control(next, 0))
	}
	cur := wf.nodes[currentStep]
	var action Action
	switch {
	case cur != nil && cur.Terminal() == TerminalHITL:
		action = ActionAdvance // a human resolved it
	case ev.action == evRetry:
		action = ActionRetry
	case next.Terminal() == TerminalHITL:
		action = ActionEscalate
	default:
		action = ActionAdvance
	}
	retried := ev.action == evRetry
	newCount := retryCount
	switch {
	case retried:
		newCount = retryCount + 1
	case action == ActionAdvance && ev.action == evConditional:
		newCount = 0
	}
	resp := n.step(next, action, newCount, retried)
	if n.autonomy && resp.Terminal == TerminalSuccess {
		if cont := n.continueStage(next); cont != nil {
			if cont.IsControl() {
				// Deviation: flow builds a plain step here and the branches are
				// skipped; taskd answers as at any fork or join.
				r := n.control(cont, 0)
				r.AutonomyContinued = true
				return n.arrive(r)
			}
			resp = n.step(cont, ActionAdvance, 0, false)
			resp.AutonomyContinued = true
		}
	}
	n.markAutonomy(resp)
	return resp, n.write(resp, WriteFull), nil
}

// forkVerdict handles a result reported on a fork: the branches are done
// and the result is their verdict, so the join's edges decide.
// There is no retry, escalation or autonomy on this path.
func (n *nav) forkVerdict(fork *Node) (*Response, *WriteThrough, error) {
	wf := n.wf
	if wf.nodes[fork.Join] == nil {
		return nil, nil, fail(ErrBrokenWorkflow, "Join step '%s' not found in workflow '%s'", fork.Join, n.workflowType)
	}
	if !wf.hasEdges {
		return nil, nil, fail(ErrBrokenWorkflow, "Workflow %s must have edges array", n.workflowType)
	}
	ev := wf.evaluate(fork.Join, n.result, 0)
	if ev.next == "" {
		return nil, nil, ev.noMatch(fork.Join, n.result)
	}
	next := wf.nodes[ev.next]
	if next == nil {
		return nil, nil, fail(ErrBrokenWorkflow, "Post-join step '%s' not found in workflow", ev.next)
	}
	if next.IsControl() {
		return n.arrive(n.control(next, 0))
	}
	resp := n.step(next, ActionAdvance, 0, false)
	n.markAutonomy(resp)
	return resp, n.write(resp, WriteFull), nil
}

// arrive finishes an advance that lands on a fork or join: only the
// metadata is written.
func (n *nav) arrive(resp *Response) (*Response, *WriteThrough, error) {
	n.markAutonomy(resp)
	return resp, n.write(resp, WriteMetadata), nil
}

// continueStage returns the step autonomy continues to from a stage
// boundary: the target of end's first on:"passed" edge, if it exists and is
// neither a start nor an end node.
func (n *nav) continueStage(end *Node) *Node {
	for _, i := range n.wf.out[end.ID] {
		if e := n.wf.edges[i]; e.On == "passed" {
			if t := n.wf.nodes[e.To]; t != nil && !t.IsTerminal() {
				return t
			}
			return nil
		}
	}
	return nil
}

// markAutonomy records the autonomy flag on an advance: true while it is on,
// false when this call switched a stored true off.
func (n *nav) markAutonomy(resp *Response) {
	if n.autonomy || n.clearAutonomy {
		on := n.autonomy
		resp.Metadata.Autonomy = &on
	}
}
