package subagent

import (
	"slices"
	"strings"
)

// merge is the merge strategy: every result, conflicts over shared files
// and answer keys.
func (r *resolver) merge(ins []convergeInput, tol tolerance) {
	cv := r.cv
	var ok, failed []string
	var keys []string
	vals := map[string]map[string]string{} // key → child → value
	var files []string
	owners := map[string][]string{}
	for i := range ins {
		in := &ins[i]
		if !in.ok() {
			failed = append(failed, in.ID)
			continue
		}
		ok = append(ok, in.ID)
		r.role(in.ID, "merged")
		if strings.TrimSpace(in.Res.Answer) != "" {
			ks, vs := answerKeys(in.Res.Answer)
			for _, k := range ks {
				if vals[k] == nil {
					keys = append(keys, k)
					vals[k] = map[string]string{}
				}
				vals[k][in.ID] = vs[k]
			}
		}
		for _, f := range in.Files {
			if owners[f] == nil {
				files = append(files, f)
			}
			if !slices.Contains(owners[f], in.ID) {
				owners[f] = append(owners[f], in.ID)
			}
		}
	}
	merged := map[string]string{}
	for _, k := range keys {
		var ids []string
		for _, id := range ok {
			if _, has := vals[k][id]; has {
				ids = append(ids, id)
			}
		}
		if groups := groupAnswers(ids, func(id string) string { return vals[k][id] }, tol); len(groups) > 1 {
			if w := r.decide(conflict{Kind: "answer", Key: k, Children: ids, Values: vals[k]}); w != "" {
				merged[k] = vals[k][w]
			}
			continue
		}
		merged[k] = vals[k][ids[0]]
	}
	if len(files) > 0 {
		cv.Files = map[string]string{}
	}
	for _, f := range files {
		if len(owners[f]) == 1 {
			cv.Files[f] = owners[f][0]
			continue
		}
		if w := r.decide(conflict{Kind: "file", Key: f, Children: owners[f]}); w != "" {
			cv.Files[f] = w
		}
	}
	if v, only := merged[""]; only && len(merged) == 1 {
		cv.Answer = v
	} else if len(merged) > 0 {
		obj := map[string]any{}
		for k, v := range merged {
			obj[k] = v
		}
		cv.Answer = obj
	}
	cv.Success = len(failed) == 0
	if len(failed) > 0 {
		cv.Reason = "not every child succeeded: " + strings.Join(failed, ", ")
	}
}

// vote is the vote strategy: the most common answer of the succeeded
// children.
func (r *resolver) vote(ins []convergeInput) {
	cv := r.cv
	var voters []string
	for i := range ins {
		in := &ins[i]
		switch {
		case in.ok() && strings.TrimSpace(in.Res.Answer) != "":
			voters = append(voters, in.ID)
		case in.ok():
			r.role(in.ID, "abstained")
		}
	}
	if len(voters) == 0 {
		cv.Reason = "no child succeeded with an answer to vote on"
		return
	}
	answer := func(id string) string { return r.byID[id].Res.Answer }
	groups := groupAnswers(voters, answer, tolerance{})
	cv.Votes = map[string][]string{}
	top := 0
	for _, g := range groups {
		cv.Votes[strings.TrimSpace(answer(g[0]))] = g
		top = max(top, len(g))
	}
	var tied [][]string
	for _, g := range groups {
		if len(g) == top {
			tied = append(tied, g)
		}
	}
	win := tied[0]
	if len(tied) > 1 {
		c := conflict{Kind: "tie", Values: map[string]string{}}
		for _, g := range tied {
			for _, id := range g {
				c.Children = append(c.Children, id)
				c.Values[id] = answer(id)
			}
		}
		w := r.decide(c)
		if w == "" {
			for _, id := range voters {
				r.role(id, "dissent")
			}
			return
		}
		cv.Winner = w
		for _, g := range tied {
			if slices.Contains(g, w) {
				win = g
			}
		}
	}
	for _, id := range voters {
		switch {
		case id == cv.Winner:
			r.role(id, "winner")
		case slices.Contains(win, id):
			r.role(id, "agreed")
		case cv.Winner != "" && tiedMember(tied, id):
			r.role(id, "overridden")
		default:
			r.role(id, "dissent")
		}
	}
	cv.Answer = strings.TrimSpace(answer(win[0]))
	cv.Success = true
}

func tiedMember(tied [][]string, id string) bool {
	for _, g := range tied {
		if slices.Contains(g, id) {
			return true
		}
	}
	return false
}

// consensus is the consensus strategy: every child succeeded and the
// answers agree.
func (r *resolver) consensus(ins []convergeInput, tol tolerance) {
	cv := r.cv
	var cands []string
	values := map[string]string{}
	for i := range ins {
		in := &ins[i]
		switch {
		case in.ok() && strings.TrimSpace(in.Res.Answer) != "":
			cands = append(cands, in.ID)
			values[in.ID] = in.Res.Answer
		case in.ok():
			values[in.ID] = "(no answer)"
		default:
			values[in.ID] = "(" + string(in.State) + ")"
		}
	}
	if len(cands) == 0 {
		cv.Reason = "no child succeeded with an answer"
		return
	}
	groups := groupAnswers(cands, func(id string) string { return values[id] }, tol)
	if len(groups) == 1 && len(cands) == len(ins) {
		for _, id := range cands {
			r.role(id, "agreed")
		}
		cv.Answer = strings.TrimSpace(values[cands[0]])
		cv.Success = true
		return
	}
	w := r.decide(conflict{Kind: "disagreement", Children: cands, Values: values})
	for _, id := range cands {
		r.role(id, "dissent")
	}
	if w == "" {
		return
	}
	for _, g := range groups {
		if slices.Contains(g, w) {
			for _, id := range g {
				r.role(id, "agreed")
			}
		}
	}
	r.role(w, "winner")
	cv.Winner = w
	cv.Answer = strings.TrimSpace(values[w])
	cv.Success = true
}

// firstSuccess is the first_success strategy: the earliest success wins.
func (r *resolver) firstSuccess(ins []convergeInput) {
	cv := r.cv
	var first *convergeInput
	for i := range ins {
		in := &ins[i]
		if in.ok() && (first == nil || in.FinishedAt.Before(first.FinishedAt)) {
			first = in
		}
	}
	for i := range ins {
		switch in := &ins[i]; {
		case in == first:
			r.role(in.ID, "winner")
		case in.ok():
			r.role(in.ID, "ignored")
		}
	}
	if first == nil {
		cv.Reason = "no child succeeded"
		return
	}
	cv.Winner = first.ID
	if a := strings.TrimSpace(first.Res.Answer); a != "" {
		cv.Answer = a
	}
	cv.Success = true
}
