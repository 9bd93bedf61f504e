package agent

import (
	"strings"

	"github.com/taskd/taskd/daemon/config"
)

// A gate is a step whose verdict decides a path: a workflow step, a loop's
// judge, a vote. Its agent's answer carries the verdict in a form the
// gate names (the result object, a loop sentinel); a model's answer
// without one is asked once more, in the same session, for just the
// verdict (package job). These are the pieces of that the agent's output
// decides.

// IsModel reports whether profile p runs a model, whose answer is read
// (claude, codex, opencode), rather than a program whose exit status is
// its result (exec, flags "none").
func IsModel(p *config.Profile) bool { return p != nil && p.Flags != "none" }

// HasReport reports whether text, an agent's final answer, holds the
// result object: a JSON object with a boolean "success".
func HasReport(text string) bool {
	return LastObject([]byte(text), HasBoolSuccess) != nil
}

// CanContinue reports whether the session of an attempt of profile p can
// be continued by another run of its agent: p is claude's and the session
// is known. (taskd does not yet pass sessions to codex and opencode.)
func CanContinue(p *config.Profile, session string) bool {
	// (A session is an argument of --resume: never one that reads as a flag.)
	return p != nil && p.Flags == "claude" && sessionIDPattern.MatchString(session) && session[0] != '-'
}

// WithVerdict is the result of an attempt whose agent answered res and,
// asked again in the same session, again: one attempt, whose final text
// is both answers and whose report is read from it (the second's, if it
// has one); its turns, cost and time are both runs'.
func WithVerdict(res, again Result) Result {
	out := res
	out.Output = strings.TrimSpace(res.Output + "\n\n" + again.Output)
	out.Summary, out.Results, out.Answer, out.Confidence = "", "", "", nil
	readReport(&out, out.Output)
	out.Turns += again.Turns
	out.DurationMs += again.DurationMs
	if again.CostUSD != nil {
		c := *again.CostUSD
		if res.CostUSD != nil {
			c = roundCost(c + *res.CostUSD)
		}
		out.CostUSD = &c
	}
	if again.SessionID != "" {
		out.SessionID = again.SessionID
	}
	return out
}
