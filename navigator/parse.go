package navigator

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/taskd/taskd/internal/jsonorder"
)

// maxNesting bounds the depth of workflow documents; real ones are four
// levels deep.
const maxNesting = 512

// Parse decodes a workflow definition from JSON. It fails only when data is
// not a JSON object; a field of the wrong type is ignored as if absent and
// recorded as a problem that Validate reports, so that one typo yields a
// complete list of problems rather than the first. Unknown fields are
// ignored, as flow ignores them.
//
// The document is read as flow reads it, with JSON.parse: keys in
// JavaScript's order, a repeated key keeping its first position and its
// last value, numbers as JavaScript prints them, and bytes that are not
// UTF-8 replaced with U+FFFD.
func Parse(data []byte) (*Workflow, error) {
	var dups map[*jsonorder.Object][]string // repeated keys by object
	v, err := jsonorder.Decode(data, jsonorder.Options{
		JavaScriptOrder:    true,
		JavaScriptNumbers:  true,
		ReplaceInvalidUTF8: true,
		MaxDepth:           maxNesting,
		Duplicate: func(o *jsonorder.Object, key string) {
			if dups == nil {
				dups = map[*jsonorder.Object][]string{}
			}
			dups[o] = append(dups[o], key)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("parse workflow: %w", err)
	}
	top, ok := v.(*jsonorder.Object)
	if !ok {
		return nil, fmt.Errorf("parse workflow: %w", errNotObject)
	}
	wf := &Workflow{nodes: map[string]*Node{}, out: map[string][]int{}, buckets: map[string]Bucket{}}
	for key, val := range top.All() {
		switch key {
		case "id":
			wf.ID = wf.str("", "id", val)
		case "name":
			wf.Name = wf.str("", "name", val)
		case "description":
			wf.Description = wf.str("", "description", val)
		case "nodes":
			wf.parseNodes(val, dups)
		case "edges":
			wf.parseEdges(val)
		}
	}
	return wf, nil
}

var errNotObject = errors.New("the workflow is not a JSON object")

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
		wf.problem(node, "%q is %s, want a string", field, jsonorder.TypeName(v))
	}
	return ""
}

func (wf *Workflow) parseNodes(v any, dups map[*jsonorder.Object][]string) {
	nodes, ok := v.(*jsonorder.Object)
	if !ok {
		wf.problem("", `"nodes" is %s, want an object of nodes keyed by id`, jsonorder.TypeName(v))
		return
	}
	wf.hasNodes = true
	for _, id := range dups[nodes] {
		wf.problem(id, "the node id appears more than once in \"nodes\"; only the last definition counts")
	}
	for id, val := range nodes.All() {
		fields, ok := val.(*jsonorder.Object)
		if !ok {
			wf.problem(id, "the node is %s, want an object", jsonorder.TypeName(val))
			continue
		}
		wf.order = append(wf.order, id)
		wf.nodes[id] = wf.parseNode(id, fields)
	}
}

func (wf *Workflow) parseNode(id string, fields *jsonorder.Object) *Node {
	n := &Node{ID: id}
	for key, val := range fields.All() {
		switch key {
		case "type":
			n.Type = wf.str(id, key, val)
		case "name":
			n.Name = wf.str(id, key, val)
		case "description":
			n.Description = wf.str(id, key, val)
		case "instructions":
			n.Instructions = wf.str(id, key, val)
		case "agent":
			n.Agent = wf.str(id, key, val)
		case "stage":
			n.Stage = wf.str(id, key, val)
		case "emoji":
			n.Emoji = wf.str(id, key, val)
		case "result":
			n.Result = wf.str(id, key, val)
		case "escalation":
			n.Escalation = wf.str(id, key, val)
		case "join":
			n.Join = wf.str(id, key, val)
		case "fork":
			n.Fork = wf.str(id, key, val)
		case "strategy":
			n.Strategy = wf.str(id, key, val)
		case "workflow":
			n.Workflow = wf.str(id, key, val)
		case "command":
			n.Command = wf.str(id, key, val)
		case "maxRetries":
			n.MaxRetries, n.HasMaxRetries = wf.maxRetries(id, val)
		case "context_files":
			n.ContextFiles = wf.strings(id, key, val)
		case "branches":
			n.Branches = wf.branches(id, val)
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
	case json.Number:
		if f, err := strconv.ParseFloat(string(v), 64); err != nil || f < 0 || f != float64(int(f)) {
			wf.problem(id, `"maxRetries" is %s, want a whole number of at least 0`, v)
		}
		return count(string(v)), true
	case string:
		wf.problems = append(wf.problems, Problem{Node: id, Warning: true,
			Reason: fmt.Sprintf(`"maxRetries" is the string %q; write it as a number`, v)})
		return count(v), true
	}
	wf.problem(id, `"maxRetries" is %s, want a number`, jsonorder.TypeName(v))
	return 0, false
}

func (wf *Workflow) strings(id, field string, v any) []string {
	if v == nil {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		wf.problem(id, "%q is %s, want an array of strings", field, jsonorder.TypeName(v))
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			wf.problem(id, "element %d of %q is %s, want a string", i, field, jsonorder.TypeName(e))
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
	obj, ok := v.(*jsonorder.Object)
	if !ok {
		wf.problem(id, `"branches" is %s, want an object of branches keyed by name`, jsonorder.TypeName(v))
		return nil
	}
	out := make([]Branch, 0, obj.Len())
	for name, val := range obj.All() {
		fields, ok := val.(*jsonorder.Object)
		if !ok {
			wf.problem(id, "branch %q is %s, want an object with an entryStep", name, jsonorder.TypeName(val))
			continue
		}
		b := Branch{Name: name, raw: fields}
		for key, fv := range fields.All() {
			switch key {
			case "entryStep":
				b.EntryStep = wf.str(id, "branches."+name+".entryStep", fv)
			case "description":
				if fv != nil {
					b.Description = wf.str(id, "branches."+name+".description", fv)
					b.HasDescription = true
				}
			case "taskd":
				switch fv := fv.(type) {
				case *jsonorder.Object:
					b.Settings = fv
				case nil:
				default:
					wf.problem(id, `"branches.%s.taskd" is %s, want an object of metadata.taskd fields`, name, jsonorder.TypeName(fv))
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
		wf.problem("", `"edges" is %s, want an array of edges`, jsonorder.TypeName(v))
		return
	}
	wf.hasEdges = true
	wf.edges = make([]Edge, 0, len(arr))
	for i, ev := range arr {
		fields, ok := ev.(*jsonorder.Object)
		if !ok {
			wf.problem("", "edge %d is %s, want an object with from and to", i, jsonorder.TypeName(ev))
			continue
		}
		var e Edge
		where := "edge " + strconv.Itoa(i)
		for key, val := range fields.All() {
			switch key {
			case "from":
				e.From = wf.str("", where+` "from"`, val)
			case "to":
				e.To = wf.str("", where+` "to"`, val)
			case "label":
				e.Label = wf.str("", where+` "label"`, val)
			case "on":
				e.On = wf.on(where, val)
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
	case json.Number:
		if f, err := strconv.ParseFloat(string(v), 64); err == nil && f == 0 {
			return ""
		}
	}
	wf.problem("", `%s "on" is %s, want "passed" or "failed"`, where, jsonorder.TypeName(v))
	return neverMatches
}
