package subagent

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/task"
)

// in is a child's persisted result for converge: id, its state, its
// answer, when it finished (seconds), its confidence (<0: none).
func in(id string, state task.State, answer string, at int, conf float64, files ...string) convergeInput {
	r := agent.Result{Success: state == task.Succeeded, Answer: answer, Summary: "did " + id}
	if conf >= 0 {
		r.Confidence = &conf
	}
	return convergeInput{ID: id, Name: id, State: state, FinishedAt: time.Unix(int64(at), 0), Res: r, Files: files}
}

// TestConverge_Strategies: each strategy over the children's results,
// record in and record out: the answer, the winner, whether it succeeded,
// each child's role, and what is left for a person.
func TestConverge_Strategies(t *testing.T) {
	ok, failed := task.Succeeded, task.Failed
	for _, tt := range []struct {
		name       string
		strategy   string
		method     string
		answers    []string // a person's answers: child ids
		tol        tolerance
		ins        []convergeInput
		success    bool
		answer     string // JSON of the converged answer
		winner     string
		roles      []string
		unresolved int
	}{
		{name: "vote: the majority", strategy: strategyVote, method: resolveManual,
			ins:     []convergeInput{in("a", ok, "lru", 1, -1), in("b", ok, "lfu", 2, -1), in("c", ok, " lru ", 3, -1), in("d", ok, "", 4, -1), in("e", failed, "", 5, -1)},
			success: true, answer: `"lru"`, roles: []string{"a agreed", "b dissent", "c agreed", "d abstained", "e failed"}},
		{name: "vote: a tie left to a person", strategy: strategyVote, method: resolveManual,
			ins:     []convergeInput{in("a", ok, "x", 1, -1), in("b", ok, "y", 2, -1)},
			success: false, roles: []string{"a dissent", "b dissent"}, unresolved: 1},
		{name: "vote: a tie a person decided", strategy: strategyVote, method: resolveManual, answers: []string{"b"},
			ins:     []convergeInput{in("a", ok, "x", 1, -1), in("b", ok, "y", 2, -1)},
			success: true, answer: `"y"`, winner: "b", roles: []string{"a overridden", "b winner"}},
		{name: "vote: a tie to the latest", strategy: strategyVote, method: resolveLatest,
			ins:     []convergeInput{in("a", ok, "x", 5, -1), in("b", ok, "y", 2, -1)},
			success: true, answer: `"x"`, winner: "a", roles: []string{"a winner", "b overridden"}},
		{name: "vote: nobody answered", strategy: strategyVote, method: resolveManual,
			ins:     []convergeInput{in("a", failed, "", 1, -1), in("b", ok, "", 2, -1)},
			success: false, roles: []string{"a failed", "b abstained"}},
		{name: "consensus: all agree, numbers within tolerance", strategy: strategyConsensus, method: resolveManual, tol: tolerance{Abs: 0.01},
			ins:     []convergeInput{in("a", ok, "3.14", 1, -1), in("b", ok, "3.141", 2, -1)},
			success: true, answer: `"3.14"`, roles: []string{"a agreed", "b agreed"}},
		{name: "consensus: a disagreement to the more confident", strategy: strategyConsensus, method: resolveConfidence,
			ins:     []convergeInput{in("a", ok, "yes", 1, 0.4), in("b", ok, "no", 2, 0.9)},
			success: true, answer: `"no"`, winner: "b", roles: []string{"a dissent", "b winner"}},
		{name: "consensus: one failed is no consensus", strategy: strategyConsensus, method: resolveManual,
			ins:     []convergeInput{in("a", ok, "yes", 1, -1), in("b", failed, "", 2, -1)},
			success: false, roles: []string{"a dissent", "b failed"}, unresolved: 1},
		{name: "first success: the earliest", strategy: strategyFirstSuccess, method: resolveManual,
			ins:     []convergeInput{in("a", ok, "late", 9, -1), in("b", failed, "", 1, -1), in("c", ok, "early", 3, -1)},
			success: true, answer: `"early"`, winner: "c", roles: []string{"a ignored", "b failed", "c winner"}},
		{name: "merge: keys and files", strategy: strategyMerge, method: resolveManual,
			ins:     []convergeInput{in("a", ok, `{"size": "10"}`, 1, -1, "a.go"), in("b", ok, `{"color": "red"}`, 2, -1, "b.go")},
			success: true, answer: `{"color":"red","size":"10"}`, roles: []string{"a merged", "b merged"}},
		{name: "merge: a file both changed, to the latest", strategy: strategyMerge, method: resolveLatest,
			ins:     []convergeInput{in("a", ok, "", 1, -1, "x.go"), in("b", ok, "", 2, -1, "x.go")},
			success: true, roles: []string{"a merged", "b merged"}},
		{name: "merge: a child failed", strategy: strategyMerge, method: resolveManual,
			ins:     []convergeInput{in("a", ok, "", 1, -1), in("b", failed, "", 2, -1)},
			success: false, roles: []string{"a merged", "b failed"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cv := converge(tt.ins, tt.strategy, tt.method, tt.tol, tt.answers)
			answer := ""
			if cv.Answer != nil {
				b, _ := json.Marshal(cv.Answer)
				answer = string(b)
			}
			var roles []string
			for _, c := range cv.Children {
				roles = append(roles, c.ID+" "+c.Role)
			}
			if cv.Success != tt.success || answer != tt.answer || cv.Winner != tt.winner || !slices.Equal(roles, tt.roles) || len(cv.Unresolved) != tt.unresolved {
				t.Errorf("converge = success %v, answer %s, winner %q, roles %v, unresolved %v\nwant success %v, answer %s, winner %q, roles %v, unresolved %d",
					cv.Success, answer, cv.Winner, roles, cv.Unresolved, tt.success, tt.answer, tt.winner, tt.roles, tt.unresolved)
			}
			if tt.strategy == strategyMerge && tt.method == resolveLatest && cv.Files["x.go"] != "b" {
				t.Errorf("x.go stands as %q's change, want the latest (b)", cv.Files["x.go"])
			}
		})
	}
}
