package navigator

import "strings"

// step builds the response for a work, start or end node.
func (n *nav) step(node *Node, action Action, retryCount int, retried bool) *Response {
	r := &Response{
		CurrentStep:        node.ID,
		Stage:              node.Stage,
		Subagent:           node.Agent,
		Terminal:           node.Terminal(),
		Action:             action,
		RetriesIncremented: retried,
		MaxRetries:         node.MaxRetries,
		Metadata:           Metadata{WorkflowType: n.workflowType, CurrentStep: node.ID, RetryCount: retryCount},
		SourceRoot:         n.sourceRoot,
		Command:            node.Command,
	}
	if !node.IsTerminal() {
		r.StepInstructions = n.instructions(node)
		r.OrchestratorInstructions = n.prompt(node, r.StepInstructions.Guidance)
	}
	return r
}

// instructions describes a step: its name, its description and its
// guidance (the node's instructions, else the paragraph for its bucket),
// with "./" paths resolved against the source root.
func (n *nav) instructions(node *Node) *StepInstructions {
	si := &StepInstructions{
		Name:        node.Name,
		Description: resolveRefs(node.Description, n.sourceRoot),
		Guidance:    resolveRefs(node.Instructions, n.sourceRoot),
	}
	if si.Name == "" {
		si.Name = node.ID
	}
	if si.Guidance == "" {
		si.Guidance = guidance[n.wf.buckets[node.ID]]
	}
	return si
}

// prompt builds the orchestrator's instructions for a step:
//
//	[Invoke <agent> to complete the following task: ]<guidance>\n\n<description>[\n\n<context block>]
//
// The description is the user's (the input's, else the task's), or the
// placeholder "{task description}".
func (n *nav) prompt(node *Node, guidance string) string {
	desc := n.desc
	if desc == "" {
		desc = "{task description}"
	}
	ctx := contextBlock(node.ContextFiles, n.sourceRoot, n.projectRoot)
	var b strings.Builder
	b.Grow(len(node.Agent) + len(guidance) + len(desc) + len(ctx) + 48)
	if node.Agent != "" {
		b.WriteString("Invoke ")
		b.WriteString(node.Agent)
		b.WriteString(" to complete the following task: ")
	}
	b.WriteString(guidance)
	b.WriteString("\n\n")
	b.WriteString(desc)
	if ctx != "" {
		b.WriteString("\n\n")
		b.WriteString(ctx)
	}
	return b.String()
}

// control builds the response for a fork or join node.
func (n *nav) control(node *Node, retryCount int) *Response {
	r := &Response{
		CurrentStep: node.ID,
		Metadata:    Metadata{WorkflowType: n.workflowType, CurrentStep: node.ID, RetryCount: retryCount},
		SourceRoot:  n.sourceRoot,
	}
	if node.Type == TypeJoin {
		r.Action = ActionJoin
		r.Join = &Join{ForkStep: node.Fork, Strategy: strategy(node)}
		return r
	}
	r.Action = ActionFork
	f := &Fork{JoinStep: node.Join, JoinStrategy: StrategyAllPass, Branches: make([]ForkBranch, len(node.Branches))}
	if j := n.wf.nodes[node.Join]; j != nil {
		f.JoinStrategy = strategy(j)
	}
	for i := range node.Branches {
		f.Branches[i] = n.branch(node, &node.Branches[i])
	}
	r.Fork = f
	return r
}

func strategy(join *Node) string {
	if join.Strategy == "" {
		return StrategyAllPass
	}
	return join.Strategy
}

// branch enriches one fork branch from its entry node, so the orchestrator
// can hand a single-step branch to its agent without navigating it.
func (n *nav) branch(fork *Node, b *Branch) ForkBranch {
	fb := ForkBranch{Name: b.Name, EntryStep: b.EntryStep, Description: b.Description, HasDescription: b.HasDescription, def: b}
	entry := n.wf.nodes[b.EntryStep]
	if entry == nil {
		fb.Error = "Entry step '" + b.EntryStep + "' not found"
		if !b.raw.Has("entryStep") {
			fb.Error = "Entry step 'undefined' not found"
		}
		return fb
	}
	fb.Subagent = entry.Agent
	fb.Stage = entry.Stage
	fb.StepInstructions = n.instructions(entry)
	fb.OrchestratorInstructions = n.prompt(entry, fb.StepInstructions.Guidance)
	fb.MaxRetries = entry.MaxRetries
	fb.Command = entry.Command
	fb.Settings = b.Settings
	for _, i := range n.wf.out[entry.ID] {
		if n.wf.edges[i].To != fork.Join {
			fb.MultiStep = true
			break
		}
	}
	fb.Metadata = Metadata{WorkflowType: n.workflowType, CurrentStep: entry.ID}
	return fb
}
