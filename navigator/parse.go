package navigator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// Parse decodes a workflow definition from JSON. It fails only when data is
// not a JSON object; a field of the wrong type is ignored as if absent and
// recorded as a problem that Validate reports, so that one typo yields a
// complete list of problems rather than the first. Unknown fields are
// ignored, as flow ignores them.
func Parse(data []byte) (*Workflow, error) {
	top, _, err := decodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("parse workflow: %w", locate(data, err))
	}
	wf := &Workflow{nodes: map[string]*Node{}, out: map[string][]int{}}
	for _, m := range top {
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

// locate adds the line and column to a JSON syntax error, and names an
// early end of input as such.
func locate(data []byte, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("unexpected end of JSON input")
	case errors.As(err, &se):
		line, col := 1, 1
		for _, c := range data[:min(int(se.Offset), len(data))] {
			if c == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		return fmt.Errorf("line %d, column %d: %w", line, col, err)
	}
	return err
}

// member is one key of a JSON object with its undecoded value.
type member struct {
	key string
	val json.RawMessage
}

var errNotObject = errors.New("not a JSON object")

// decodeObject splits a JSON object into its members in JavaScript's key
// order: a key that repeats keeps its first position and its last value,
// and integer-like keys move to the front in numeric order. dups lists the
// keys that repeat.
func decodeObject(data []byte) (members []member, dups []string, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if tok != json.Delim('{') {
		return nil, nil, errNotObject
	}
	index := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key := tok.(string) // the decoder only yields strings in key position
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, nil, err
		}
		if i, ok := index[key]; ok {
			members[i].val = val
			dups = append(dups, key)
			continue
		}
		index[key] = len(members)
		members = append(members, member{key, val})
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if len(bytes.TrimSpace(data[dec.InputOffset():])) > 0 {
		return nil, nil, errors.New("data after the JSON object")
	}
	sort.SliceStable(members, func(i, j int) bool {
		a, aIdx := arrayIndex(members[i].key)
		b, bIdx := arrayIndex(members[j].key)
		if aIdx && bIdx {
			return a < b
		}
		return aIdx && !bIdx
	})
	return members, dups, nil
}

// arrayIndex reports whether key is what JavaScript calls an array index
// (a canonical decimal integer below 2³²−1), which object key order puts
// first.
func arrayIndex(key string) (uint64, bool) {
	if key == "" || (len(key) > 1 && key[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(key, 10, 32)
	if err != nil || n == 1<<32-1 {
		return 0, false
	}
	return n, true
}

// kind returns the JSON type of a raw value by its first byte.
func kind(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func (wf *Workflow) problem(node, format string, args ...any) {
	wf.problems = append(wf.problems, Problem{Node: node, Reason: fmt.Sprintf(format, args...)})
}

// str decodes a string field; null counts as absent.
func (wf *Workflow) str(node, field string, raw json.RawMessage) string {
	var s string
	switch kind(raw) {
	case "a string":
		json.Unmarshal(raw, &s) // valid: the decoder produced it
	case "null":
	default:
		wf.problem(node, "%q is %s, want a string", field, kind(raw))
	}
	return s
}

func (wf *Workflow) parseNodes(raw json.RawMessage) {
	members, dups, err := decodeObject(raw)
	if err != nil {
		wf.problem("", `"nodes" is %s, want an object of nodes keyed by id`, kind(raw))
		return
	}
	wf.hasNodes = true
	for _, id := range dups {
		wf.problem(id, "the node id appears more than once in \"nodes\"; only the last definition counts")
	}
	for _, m := range members {
		fields, _, err := decodeObject(m.val)
		if err != nil {
			wf.problem(m.key, "the node is %s, want an object", kind(m.val))
			continue
		}
		wf.order = append(wf.order, m.key)
		wf.nodes[m.key] = wf.parseNode(m.key, fields)
	}
}

func (wf *Workflow) parseNode(id string, fields []member) *Node {
	n := &Node{ID: id}
	for _, f := range fields {
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
	return n
}

// maxRetries decodes a retry budget. Numbers and numeric strings count (the
// latter with a problem); null counts as absent.
func (wf *Workflow) maxRetries(id string, raw json.RawMessage) (int, bool) {
	switch kind(raw) {
	case "null":
		return 0, false
	case "a number":
		var f float64
		json.Unmarshal(raw, &f)
		if f < 0 || f != float64(int(f)) {
			wf.problem(id, `"maxRetries" is %s, want a whole number of at least 0`, raw)
		}
		return count(json.Number(raw)), true
	case "a string":
		var s string
		json.Unmarshal(raw, &s)
		wf.problems = append(wf.problems, Problem{Node: id, Warning: true,
			Reason: fmt.Sprintf(`"maxRetries" is the string %q; write it as a number`, s)})
		return count(s), true
	default:
		wf.problem(id, `"maxRetries" is %s, want a number`, kind(raw))
		return 0, false
	}
}

func (wf *Workflow) strings(id, field string, raw json.RawMessage) []string {
	if kind(raw) == "null" {
		return nil
	}
	var vals []json.RawMessage
	if kind(raw) != "an array" || json.Unmarshal(raw, &vals) != nil {
		wf.problem(id, "%q is %s, want an array of strings", field, kind(raw))
		return nil
	}
	out := make([]string, 0, len(vals))
	for i, v := range vals {
		var s string
		if kind(v) != "a string" || json.Unmarshal(v, &s) != nil {
			wf.problem(id, "element %d of %q is %s, want a string", i, field, kind(v))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (wf *Workflow) branches(id string, raw json.RawMessage) []Branch {
	if kind(raw) == "null" {
		return nil
	}
	members, _, err := decodeObject(raw)
	if err != nil {
		wf.problem(id, `"branches" is %s, want an object of branches keyed by name`, kind(raw))
		return nil
	}
	out := make([]Branch, 0, len(members))
	for _, m := range members {
		fields, _, err := decodeObject(m.val)
		if err != nil {
			wf.problem(id, "branch %q is %s, want an object with an entryStep", m.key, kind(m.val))
			continue
		}
		b := Branch{Name: m.key, raw: fields}
		for _, f := range fields {
			switch f.key {
			case "entryStep":
				b.EntryStep = wf.str(id, "branches."+m.key+".entryStep", f.val)
			case "description":
				if kind(f.val) != "null" {
					b.Description = wf.str(id, "branches."+m.key+".description", f.val)
					b.HasDescription = true
				}
			}
		}
		out = append(out, b)
	}
	return out
}

func (wf *Workflow) parseEdges(raw json.RawMessage) {
	var vals []json.RawMessage
	if kind(raw) != "an array" || json.Unmarshal(raw, &vals) != nil {
		wf.problem("", `"edges" is %s, want an array of edges`, kind(raw))
		return
	}
	wf.hasEdges = true
	for i, v := range vals {
		fields, _, err := decodeObject(v)
		if err != nil {
			wf.problem("", "edge %d is %s, want an object with from and to", i, kind(v))
			continue
		}
		var e Edge
		where := fmt.Sprintf("edge %d", i)
		for _, f := range fields {
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

func (wf *Workflow) on(where string, raw json.RawMessage) string {
	var v any
	json.Unmarshal(raw, &v)
	if s, ok := v.(string); ok {
		return s
	}
	if !truthy(v) {
		return "" // null, false, 0: unconditional, as in flow
	}
	wf.problem("", `%s "on" is %s, want "passed" or "failed"`, where, kind(raw))
	return neverMatches
}
