package navigator

// How an evaluation chose its edge.
const (
	evUnconditional = "unconditional"
	evConditional   = "conditional"
	evRetry         = "retry"
	evEscalate      = "escalate"
)

// evaluation is the outcome of evaluate: the next step, or none and why.
type evaluation struct {
	next   string
	action string // one of the ev* actions, NoOutgoingEdges or NoMatchingEdge

	// Set for NoMatchingEdge.
	retryCount int
	available  []EdgeRef
}

// evaluate picks the edge to leave node by with the given result, as
// flow does:
//
//  1. no outgoing edges: no next step;
//  2. among the edges whose "on" equals the result, a failed result with
//     edges both to ends and elsewhere is a retry/escalate pair: retry (the
//     first non-end edge) while retryCount < maxRetries, else escalate (the
//     first end edge);
//  3. otherwise the first edge whose "on" equals the result;
//  4. otherwise the first unconditional edge, whatever the result;
//  5. otherwise no next step.
//
// A node that does not exist has no outgoing edges.
func (wf *Workflow) evaluate(node, result string, retryCount int) evaluation {
	idx := wf.out[node]
	if len(idx) == 0 {
		return evaluation{action: NoOutgoingEdges}
	}
	var firstUncond, firstMatch, firstRetry, firstEscalate = -1, -1, -1, -1
	for _, i := range idx {
		e := &wf.edges[i]
		switch {
		case e.On == "":
			if firstUncond < 0 {
				firstUncond = i
			}
		case e.On == result:
			if firstMatch < 0 {
				firstMatch = i
			}
			if wf.isEnd(e.To) {
				if firstEscalate < 0 {
					firstEscalate = i
				}
			} else if firstRetry < 0 {
				firstRetry = i
			}
		}
	}
	if firstMatch < 0 && firstUncond < 0 {
		ev := evaluation{action: NoMatchingEdge, retryCount: retryCount, available: make([]EdgeRef, len(idx))}
		for j, i := range idx {
			ev.available[j] = EdgeRef{To: wf.edges[i].To, On: wf.edges[i].On}
		}
		return ev
	}
	if result == "failed" && firstRetry >= 0 && firstEscalate >= 0 {
		maxRetries := 0
		if n := wf.nodes[node]; n != nil {
			maxRetries = n.MaxRetries
		}
		if retryCount < maxRetries {
			return evaluation{next: wf.edges[firstRetry].To, action: evRetry}
		}
		return evaluation{next: wf.edges[firstEscalate].To, action: evEscalate}
	}
	if firstMatch >= 0 {
		return evaluation{next: wf.edges[firstMatch].To, action: evConditional}
	}
	return evaluation{next: wf.edges[firstUncond].To, action: evUnconditional}
}

// noMatch turns an evaluation without a next step into flow's error object.
func (ev evaluation) noMatch(node, result string) *NoMatchError {
	e := &NoMatchError{CurrentStep: node, Result: result, Evaluation: Evaluation{Action: ev.action, CurrentStep: node}}
	if ev.action == NoMatchingEdge {
		e.Evaluation.Result = result
		e.Evaluation.RetryCount = ev.retryCount
		e.Evaluation.AvailableEdges = ev.available
	}
	return e
}
