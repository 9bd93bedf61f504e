package subagent

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/task"
)

// The strategies of /converge over the persisted results of children (no
// I/O here: convergerecord.go loads the results and writes the output).
//
//   - merge: every result, in the order given. Conflicts: two succeeded
//     children list the same file in their result's "files", or give
//     different values for the same key of "answer" (an answer that is a
//     JSON object has keys; any other answer is the value of one key).
//     It succeeds when every child succeeded and no conflict is left.
//   - vote: the answers of the succeeded children (at least 3 children);
//     the most common answer wins; a tie for the most votes is a conflict.
//   - consensus: every child succeeded and all answers agree (numbers
//     within the tolerance); otherwise one conflict.
//   - first_success: the child that succeeded first (by finish time) wins;
//     no conflicts.
//
// Answers are compared with spaces trimmed and collapsed and case ignored;
// two numbers compare as numbers, within the tolerance.
//
// Conflict resolution: a person's answers (manual) come first: the first
// answered child that takes part in a conflict wins it. Otherwise
// auto_accept_latest picks the participant that finished last, and
// prefer_higher_confidence the one with the highest "confidence" (a tie:
// the later one; a participant without confidence leaves the conflict to a
// person). With manual, or when nothing decides, the conflict stays
// unresolved and no output is written until a person answers.

// Converge strategies and conflict resolutions.
const (
	strategyMerge        = "merge"
	strategyVote         = "vote"
	strategyConsensus    = "consensus"
	strategyFirstSuccess = "first_success"

	resolveManual     = "manual"
	resolveLatest     = "auto_accept_latest"
	resolveConfidence = "prefer_higher_confidence"
)

// convergeInput is one child's persisted result.
type convergeInput struct {
	ID, Name   string
	State      task.State
	FinishedAt time.Time
	Res        agent.Result
	Files      []string
}

func (in *convergeInput) ok() bool { return in.State == task.Succeeded }

// tolerance is how far two numeric answers may be apart and still agree:
// Abs absolutely, or Rel times the larger magnitude.
type tolerance struct{ Abs, Rel float64 }

// conflict is one disagreement among children.
type conflict struct {
	Kind     string            `json:"kind"`          // file, answer, tie or disagreement
	Key      string            `json:"key,omitempty"` // the file, or the answer's key
	Children []string          `json:"children"`      // who may win it
	Values   map[string]string `json:"values,omitempty"`
}

// resolution says who won a conflict and whose results were overridden.
type resolution struct {
	Conflict   int               `json:"conflict"` // index in conflicts
	Method     string            `json:"method"`   // manual, auto_accept_latest or prefer_higher_confidence
	Winner     string            `json:"winner"`
	Overridden []string          `json:"overridden"`
	Values     map[string]string `json:"overriddenValues,omitempty"`
}

// convergeChild is one child in the converged result.
type convergeChild struct {
	ID         string   `json:"id"`
	Name       string   `json:"name,omitempty"`
	State      string   `json:"state"`
	Outcome    string   `json:"outcome"`
	Role       string   `json:"role"` // winner, merged, agreed, dissent, abstained, overridden, failed, cancelled, ignored
	Summary    string   `json:"summary,omitempty"`
	Answer     string   `json:"answer,omitempty"`
	Confidence *float64 `json:"confidence,omitempty"`
	Files      []string `json:"files,omitempty"`
	FinishedAt string   `json:"finishedAt,omitempty"`
	Output     string   `json:"output,omitempty"`
}

// converged is the result of a convergence: converged.json.
type converged struct {
	Strategy           string              `json:"strategy"`
	ConflictResolution string              `json:"conflictResolution"`
	OutputFormat       string              `json:"outputFormat"`
	SubagentIDs        []string            `json:"subagentIds"`
	Success            bool                `json:"success"`
	Reason             string              `json:"reason,omitempty"`
	Winner             string              `json:"winner,omitempty"`
	Answer             any                 `json:"answer,omitempty"` // a string, or an object of merged keys
	Votes              map[string][]string `json:"votes,omitempty"`
	Files              map[string]string   `json:"files,omitempty"` // file → the child whose change stands
	Children           []convergeChild     `json:"children"`
	Conflicts          []conflict          `json:"conflicts"`
	Resolutions        []resolution        `json:"resolutions"`
	Unresolved         []int               `json:"unresolved,omitempty"`
	Cancelled          []string            `json:"cancelled,omitempty"`
}

// converge applies strategy to ins (in the order the ids were given),
// resolving conflicts by method after a person's answers (child ids).
func converge(ins []convergeInput, strategy, method string, tol tolerance, answers []string) *converged {
	cv := &converged{Strategy: strategy, ConflictResolution: method, Conflicts: []conflict{}, Resolutions: []resolution{}}
	byID := map[string]*convergeInput{}
	for i := range ins {
		in := &ins[i]
		byID[in.ID] = in
		cv.SubagentIDs = append(cv.SubagentIDs, in.ID)
		c := convergeChild{ID: in.ID, Name: in.Name, State: string(in.State), Outcome: outcomeOfState(in.State),
			Summary: in.Res.Summary, Answer: in.Res.Answer, Confidence: in.Res.Confidence, Files: in.Files,
			Output: agent.Truncate(in.Res.Output, 8<<10), Role: "failed"}
		if !in.FinishedAt.IsZero() {
			c.FinishedAt = task.Stamp(in.FinishedAt)
		}
		if in.State == task.Cancelled {
			c.Role = "cancelled"
		}
		cv.Children = append(cv.Children, c)
	}
	r := &resolver{cv: cv, byID: byID, method: method, answers: answers, tol: tol}
	switch strategy {
	case strategyMerge:
		r.merge(ins, tol)
	case strategyVote:
		r.vote(ins)
	case strategyConsensus:
		r.consensus(ins, tol)
	case strategyFirstSuccess:
		r.firstSuccess(ins)
	}
	if len(cv.Unresolved) > 0 {
		cv.Success = false
		if cv.Reason == "" {
			cv.Reason = strconv.Itoa(len(cv.Unresolved)) + " conflict(s) wait for a person"
		}
	}
	return cv
}

// resolver decides conflicts.
type resolver struct {
	cv      *converged
	byID    map[string]*convergeInput
	method  string
	answers []string
	tol     tolerance
}

// decide records conflict c and resolves it, returning the winner ("" if a
// person must decide).
func (r *resolver) decide(c conflict) string {
	r.cv.Conflicts = append(r.cv.Conflicts, c)
	idx := len(r.cv.Conflicts) - 1
	winner, how := "", ""
	for _, a := range r.answers {
		if slices.Contains(c.Children, a) {
			winner, how = a, resolveManual
			break
		}
	}
	if winner == "" {
		switch r.method {
		case resolveLatest:
			winner, how = r.latest(c.Children), resolveLatest
		case resolveConfidence:
			winner, how = r.confident(c.Children), resolveConfidence
		}
	}
	if winner == "" {
		r.cv.Unresolved = append(r.cv.Unresolved, idx)
		return ""
	}
	res := resolution{Conflict: idx, Method: how, Winner: winner}
	wv, hasValue := c.Values[winner]
	for _, id := range c.Children {
		if v, ok := c.Values[id]; hasValue && ok && sameAnswer(v, wv, r.tol) {
			continue // it agrees with the winner: nothing of it is overridden
		}
		if id != winner {
			res.Overridden = append(res.Overridden, id)
			if v, ok := c.Values[id]; ok {
				if res.Values == nil {
					res.Values = map[string]string{}
				}
				res.Values[id] = v
			}
		}
	}
	r.cv.Resolutions = append(r.cv.Resolutions, res)
	return winner
}

// latest is the child of ids that finished last (the later in the list on
// a tie).
func (r *resolver) latest(ids []string) string {
	best := ""
	for _, id := range ids {
		if best == "" || !r.byID[id].FinishedAt.Before(r.byID[best].FinishedAt) {
			best = id
		}
	}
	return best
}

// confident is the child of ids with the highest confidence, or "" when
// one of them has none.
func (r *resolver) confident(ids []string) string {
	best := ""
	for _, id := range ids {
		c := r.byID[id].Res.Confidence
		if c == nil {
			return ""
		}
		if best == "" {
			best = id
			continue
		}
		b := *r.byID[best].Res.Confidence
		if *c > b || *c == b && !r.byID[id].FinishedAt.Before(r.byID[best].FinishedAt) {
			best = id
		}
	}
	return best
}

func (r *resolver) role(id, role string) {
	for i := range r.cv.Children {
		if r.cv.Children[i].ID == id {
			r.cv.Children[i].Role = role
		}
	}
}

// answerKeys splits an answer into keyed values: a JSON object's members,
// or the whole answer under the key "".
func answerKeys(a string) (keys []string, vals map[string]string) {
	a = strings.TrimSpace(a)
	if strings.HasPrefix(a, "{") {
		dec := json.NewDecoder(strings.NewReader(a))
		dec.UseNumber()
		var obj map[string]any
		if dec.Decode(&obj) == nil {
			vals = map[string]string{}
			for k, v := range obj {
				keys = append(keys, k)
				vals[k] = agent.AsText(v)
			}
			slices.Sort(keys)
			return keys, vals
		}
	}
	return []string{""}, map[string]string{"": a}
}

// sameAnswer compares two answers: as numbers within tol when both are
// numbers, else as text with blanks collapsed and case ignored.
func sameAnswer(a, b string, tol tolerance) bool {
	fa, errA := strconv.ParseFloat(strings.TrimSpace(a), 64)
	fb, errB := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if errA == nil && errB == nil {
		diff := math.Abs(fa - fb)
		return diff <= tol.Abs || diff <= tol.Rel*math.Max(math.Abs(fa), math.Abs(fb))
	}
	return strings.EqualFold(strings.Join(strings.Fields(a), " "), strings.Join(strings.Fields(b), " "))
}

// groupAnswers groups ids by agreeing answers (each answer joins the first
// group whose first answer it agrees with), in order of first appearance.
func groupAnswers(ids []string, answer func(string) string, tol tolerance) [][]string {
	var groups [][]string
	for _, id := range ids {
		joined := false
		for i, g := range groups {
			if sameAnswer(answer(g[0]), answer(id), tol) {
				groups[i] = append(g, id)
				joined = true
				break
			}
		}
		if !joined {
			groups = append(groups, []string{id})
		}
	}
	return groups
}
