package navigator

import (
	"slices"
	"strconv"

	"github.com/taskd/taskd/internal/jsonorder"
)

// The JSON forms below are written by hand so that field order, null versus
// absent, and string escaping are exactly flow's (JSON.stringify: raw UTF-8,
// only quotes, backslashes and control characters escaped), and so that a
// response encodes without reflection.

// MarshalJSON encodes the response as flow's Navigate returns it.
func (r *Response) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// AppendJSON appends the compact JSON form of r to buf.
func (r *Response) AppendJSON(buf []byte) []byte {
	buf = slices.Grow(buf, r.sizeHint())
	buf = append(buf, `{"currentStep":`...)
	buf = appendString(buf, r.CurrentStep)
	buf = append(buf, `,"stage":`...)
	buf = appendNullable(buf, r.Stage)
	buf = append(buf, `,"subagent":`...)
	buf = appendNullable(buf, r.Subagent)
	buf = append(buf, `,"stepInstructions":`...)
	buf = r.StepInstructions.appendJSON(buf)
	buf = append(buf, `,"terminal":`...)
	buf = appendNullable(buf, string(r.Terminal))
	buf = append(buf, `,"action":`...)
	buf = appendString(buf, string(r.Action))
	buf = append(buf, `,"retriesIncremented":`...)
	buf = strconv.AppendBool(buf, r.RetriesIncremented)
	buf = append(buf, `,"autonomyContinued":`...)
	buf = strconv.AppendBool(buf, r.AutonomyContinued)
	buf = append(buf, `,"maxRetries":`...)
	buf = strconv.AppendInt(buf, int64(r.MaxRetries), 10)
	buf = append(buf, `,"orchestratorInstructions":`...)
	buf = appendNullable(buf, r.OrchestratorInstructions)
	buf = append(buf, `,"metadata":`...)
	buf = r.Metadata.appendJSON(buf)
	buf = append(buf, `,"sourceRoot":`...)
	buf = appendNullable(buf, r.SourceRoot)
	if f := r.Fork; f != nil {
		buf = append(buf, `,"fork":{"branches":{`...)
		for i := range f.Branches {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendString(buf, f.Branches[i].Name)
			buf = append(buf, ':')
			buf = f.Branches[i].appendJSON(buf)
		}
		buf = append(buf, '}')
		if f.JoinStep != "" {
			buf = append(buf, `,"joinStep":`...)
			buf = appendString(buf, f.JoinStep)
		}
		buf = append(buf, `,"joinStrategy":`...)
		buf = appendString(buf, f.JoinStrategy)
		buf = append(buf, '}')
	}
	if j := r.Join; j != nil {
		buf = append(buf, `,"join":{`...)
		if j.ForkStep != "" {
			buf = append(buf, `"forkStep":`...)
			buf = appendString(buf, j.ForkStep)
			buf = append(buf, ',')
		}
		buf = append(buf, `"strategy":`...)
		buf = appendString(buf, j.Strategy)
		buf = append(buf, '}')
	}
	return append(buf, '}')
}

// sizeHint estimates the length of r's JSON form, so that encoding
// allocates once.
func (r *Response) sizeHint() int {
	n := 320 + len(r.OrchestratorInstructions) + 2*len(r.CurrentStep) + len(r.Metadata.WorkflowType) + len(r.SourceRoot)
	if si := r.StepInstructions; si != nil {
		n += len(si.Name) + len(si.Description) + len(si.Guidance)
	}
	if f := r.Fork; f != nil {
		for i := range f.Branches {
			b := &f.Branches[i]
			n += 400 + len(b.OrchestratorInstructions) + len(b.Description)
			if si := b.StepInstructions; si != nil {
				n += len(si.Name) + len(si.Description) + len(si.Guidance)
			}
		}
	}
	return n
}

func (si *StepInstructions) appendJSON(buf []byte) []byte {
	if si == nil {
		return append(buf, "null"...)
	}
	buf = append(buf, `{"name":`...)
	buf = appendString(buf, si.Name)
	buf = append(buf, `,"description":`...)
	buf = appendNullable(buf, si.Description)
	buf = append(buf, `,"guidance":`...)
	buf = appendString(buf, si.Guidance)
	return append(buf, '}')
}

func (m *Metadata) appendJSON(buf []byte) []byte {
	buf = append(buf, `{"workflowType":`...)
	buf = appendString(buf, m.WorkflowType)
	buf = append(buf, `,"currentStep":`...)
	buf = appendString(buf, m.CurrentStep)
	buf = append(buf, `,"retryCount":`...)
	buf = strconv.AppendInt(buf, int64(m.RetryCount), 10)
	if m.Autonomy != nil {
		buf = append(buf, `,"autonomy":`...)
		buf = strconv.AppendBool(buf, *m.Autonomy)
	}
	return append(buf, '}')
}

func (b *ForkBranch) appendJSON(buf []byte) []byte {
	if b.Error != "" {
		// Flow copies the branch definition as written and adds the error.
		buf = append(buf, '{')
		wrote := false
		if b.def != nil {
			for key, val := range b.def.raw.All() {
				if key == "error" {
					continue
				}
				if wrote {
					buf = append(buf, ',')
				}
				buf = appendString(buf, key)
				buf = append(buf, ':')
				buf = jsonorder.AppendCompact(buf, val)
				wrote = true
			}
		}
		if wrote {
			buf = append(buf, ',')
		}
		buf = append(buf, `"error":`...)
		buf = appendString(buf, b.Error)
		return append(buf, '}')
	}
	buf = append(buf, `{"entryStep":`...)
	buf = appendString(buf, b.EntryStep)
	if b.HasDescription {
		buf = append(buf, `,"description":`...)
		buf = appendString(buf, b.Description)
	}
	buf = append(buf, `,"subagent":`...)
	buf = appendNullable(buf, b.Subagent)
	buf = append(buf, `,"stage":`...)
	buf = appendNullable(buf, b.Stage)
	buf = append(buf, `,"stepInstructions":`...)
	buf = b.StepInstructions.appendJSON(buf)
	buf = append(buf, `,"orchestratorInstructions":`...)
	buf = appendNullable(buf, b.OrchestratorInstructions)
	buf = append(buf, `,"maxRetries":`...)
	buf = strconv.AppendInt(buf, int64(b.MaxRetries), 10)
	buf = append(buf, `,"multiStep":`...)
	buf = strconv.AppendBool(buf, b.MultiStep)
	buf = append(buf, `,"metadata":`...)
	buf = b.Metadata.appendJSON(buf)
	return append(buf, '}')
}

// MarshalJSON encodes the error object as flow returns it.
func (e *NoMatchError) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil), nil }

// AppendJSON appends the compact JSON form of e to buf.
func (e *NoMatchError) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"error":`...)
	buf = appendString(buf, e.Error())
	buf = append(buf, `,"currentStep":`...)
	buf = appendString(buf, e.CurrentStep)
	ev := &e.Evaluation
	buf = append(buf, `,"evaluation":{"nextStep":null,"action":`...)
	buf = appendString(buf, ev.Action)
	buf = append(buf, `,"currentStep":`...)
	buf = appendString(buf, ev.CurrentStep)
	if ev.Action == NoMatchingEdge {
		buf = append(buf, `,"result":`...)
		buf = appendString(buf, ev.Result)
		buf = append(buf, `,"retryCount":`...)
		buf = strconv.AppendInt(buf, int64(ev.RetryCount), 10)
		buf = append(buf, `,"availableEdges":[`...)
		for i, a := range ev.AvailableEdges {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, '{')
			if a.To != "" {
				buf = append(buf, `"to":`...)
				buf = appendString(buf, a.To)
				buf = append(buf, ',')
			}
			buf = append(buf, `"on":`...)
			if a.On == neverMatches {
				buf = append(buf, "null"...)
			} else {
				buf = appendString(buf, a.On)
			}
			buf = append(buf, '}')
		}
		buf = append(buf, ']')
	}
	return append(buf, "}}"...)
}

// appendString writes s as JSON.stringify does.
func appendString(buf []byte, s string) []byte { return jsonorder.AppendString(buf, s) }

// appendNullable writes s, or null when it is empty.
func appendNullable(buf []byte, s string) []byte {
	if s == "" {
		return append(buf, "null"...)
	}
	return appendString(buf, s)
}
