package navigator

import (
	"errors"
	"fmt"
	"strconv"
)

// Parse decodes a workflow definition from JSON. It fails only when data is
// not a JSON object; a field of the wrong type is ignored as if absent and
// recorded as a problem that Validate reports, so that one typo yields a
// complete list of problems rather than the first. Unknown fields are
// ignored, as flow ignores them.
func Parse(data []byte) (*Workflow, error) {
	v, err := decodeJSON(data)
	if err != nil {
		return nil, fmt.Errorf("parse workflow: %w", err)
	}
	top, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("parse workflow: %w", errNotObject)
	}
	wf := &Workflow{nodes: map[string]*Node{}, out: map[string][]int{}, buckets: map[string]Bucket{}}
	for _, m := range top.members {
		switch m.key {
		case "id":
			wf.ID = wf.str("", "id", m.val)
		case "name":
			wf.Name = wf.str("", "name", m.val)
		case "description":
			wf.Description = wf.str("", "description", m.val)
		case "nodes":
			wf.parseNodes(m.val)
		case "edges":
			wf.parseEdges(m.val)
		}
	}
	return wf, nil
}

var errNotObject = errors.New("the workflow is not a JSON object")

// kind names the JSON type of a decoded value for problems.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case number:
		return "a number"
	case []any:
		return "an array"
	default:
		return "an object"
	}
}

func (wf *Workflow) problem(node, format string, args ...any) {
	wf.problems = append(wf.problems, Problem{Node: node, Reason: fmt.Sprintf(format, args...)})
}

// str reads a string field; null counts as absent.
func (wf *Workflow) str(node, field string, v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
	default:
		wf.problem(node, "%q is %s, want a string", field, kind(v))
	}
	return ""
}

func (wf *Workflow) parseNodes(v any) {
	nodes, ok := v.(*object)
	if !ok {
		wf.problem("", `"nodes" is %s, want an object of nodes keyed by id`, kind(v))
		return
	}
	wf.hasNodes = true
	for _, id := range nodes.dups {
		wf.problem(id, "the node id appears more than once in \"nodes\"; only the last definition counts")
	}
	for _, m := range nodes.members {
		fields, ok := m.val.(*object)
		if !ok {
			wf.problem(m.key, "the node is %s, want an object", kind(m.val))
			continue
		}
		wf.order = append(wf.order, m.key)
		wf.nodes[m.key] = wf.parseNode(m.key, fields)
	}
}

func (wf *Workflow) parseNode(id string, fields *object) *Node {
	n := &Node{ID: id}
	for _, f := range fields.members {
		switch f.key {
		case "type":
			n.Type = wf.str(id, f.key, f.val)
		case "name":
			n.Name = wf.str(id, f.key, f.val)
		case "description":
			n.Description = wf.str(id, f.key, f.val)
		case "instructions":
			n.Instructions = wf.str(id, f.key, f.val)
		case "agent":
			n.Agent = wf.str(id, f.key, f.val)
		case "stage":
			n.Stage = wf.str(id, f.key, f.val)
		case "emoji":
			n.Emoji = wf.str(id, f.key, f.val)
		case "result":
			n.Result = wf.str(id, f.key, f.val)
		case "escalation":
			n.Escalation = wf.str(id, f.key, f.val)
		case "join":
			n.Join = wf.str(id, f.key, f.val)
		case "fork":
			n.Fork = wf.str(id, f.key, f.val)
		case "strategy":
			n.Strategy = wf.str(id, f.key, f.val)
		case "workflow":
			n.Workflow = wf.str(id, f.key, f.val)
		case "command":
			n.Command = wf.str(id, f.key, f.val)
		case "maxRetries":
			n.MaxRetries, n.HasMaxRetries = wf.maxRetries(id, f.val)
		case "context_files":
			n.ContextFiles = wf.strings(id, f.key, f.val)
		case "branches":
			n.Branches = wf.branches(id, f.val)
		}
	}
	wf.buckets[id] = Classify(id, n.Name)
	return n
}

// maxRetries reads a retry budget. Numbers and numeric strings count (the
// latter with a warning); null counts as absent.
func (wf *Workflow) maxRetries(id string, v any) (int, bool) {
	switch v := v.(type) {
	case nil:
		return 0, false
	case number:
		if f, err := strconv.ParseFloat(string(v), 64); err != nil || f < 0 || f != float64(int(f)) {
			wf.problem(id, `"maxRetries" is %s, want a whole number of at least 0`, v)
		}
		return count(string(v)), true
	case string:
		wf.problems = append(wf.problems, Problem{Node: id, Warning: true,
			Reason: fmt.Sprintf(`"maxRetries" is the string %q; write it as a number`, v)})
		return count(v), true
	}
	wf.problem(id, `"maxRetries" is %s, want a number`, kind(v))
	return 0, false
}

func (wf *Workflow) strings(id, field string, v any) []string {
	if v == nil {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		wf.problem(id, "%q is %s, want an array of strings", field, kind(v))
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			wf.problem(id, "element %d of %q is %s, want a string", i, field, kind(e))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (wf *Workflow) branches(id string, v any) []Branch {
	if v == nil {
		return nil
	}
	obj, ok := v.(*object)
	if !ok {
		wf.problem(id, `"branches" is %s, want an object of branches keyed by name`, kind(v))
		return nil
	}
	out := make([]Branch, 0, len(obj.members))
	for _, m := range obj.members {
		fields, ok := m.val.(*object)
		if !ok {
			wf.problem(id, "branch %q is %s, want an object with an entryStep", m.key, kind(m.val))
			continue
		}
		b := Branch{Name: m.key, raw: fields}
		for _, f := range fields.members {
			switch f.key {
			case "entryStep":
				b.EntryStep = wf.str(id, "branches."+m.key+".entryStep", f.val)
			case "description":
				if f.val != nil {
					b.Description = wf.str(id, "branches."+m.key+".description", f.val)
					b.HasDescription = true
				}
			}
		}
		out = append(out, b)
	}
	return out
}

func (wf *Workflow) parseEdges(v any) {
	arr, ok := v.([]any)
	if !ok {
		wf.problem("", `"edges" is %s, want an array of edges`, kind(v))
		return
	}
	wf.hasEdges = true
	wf.edges = make([]Edge, 0, len(arr))
	for i, ev := range arr {
		fields, ok := ev.(*object)
		if !ok {
			wf.problem("", "edge %d is %s, want an object with from and to", i, kind(ev))
			continue
		}
		var e Edge
		where := "edge " + strconv.Itoa(i)
		for _, f := range fields.members {
			switch f.key {
			case "from":
				e.From = wf.str("", where+` "from"`, f.val)
			case "to":
				e.To = wf.str("", where+` "to"`, f.val)
			case "label":
				e.Label = wf.str("", where+` "label"`, f.val)
			case "on":
				e.On = wf.on(where, f.val)
			}
		}
		wf.out[e.From] = append(wf.out[e.From], len(wf.edges))
		wf.edges = append(wf.edges, e)
	}
}

// neverMatches marks an edge whose "on" is a truthy non-string: flow compares
// results with ===, so such an edge never matches any result.
const neverMatches = "\x00"

func (wf *Workflow) on(where string, v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return "" // unconditional, as in flow
	case bool:
		if !v {
			return ""
		}
	case number:
		if f, err := strconv.ParseFloat(string(v), 64); err == nil && f == 0 {
			return ""
		}
	}
	wf.problem("", `%s "on" is %s, want "passed" or "failed"`, where, kind(v))
	return neverMatches
}
