package prompt

import (
	"strconv"
	"strings"
)

// check enforces the rules that hold however overrides were written: in a
// block, in metadata.taskd fields, in a command file's frontmatter, or
// merged from two of those. With fields set, errors name the fields
// (metadata.taskd.loop.until) rather than the block's keys (until).
func (o Overrides) check(fields bool) *Error {
	name := func(key string) string {
		if !fields {
			return key
		}
		switch key {
		case "loop":
			key = "loop.max"
		case "until", "untilCommand":
			key = "loop." + key
		}
		return fieldsPrefix + key
	}
	texts := map[string][]string{"model": {o.Model}, "agent": {o.Agent}, "as": {o.As}, "return": o.Return, "parallel": o.Parallel}
	if o.Loop != nil {
		texts["until"], texts["untilCommand"] = []string{o.Loop.Until}, []string{o.Loop.UntilCommand}
	}
	for _, key := range blockKeys {
		for _, s := range texts[key] {
			if e := checkUTF8(s, false); e != nil {
				return errorf("%s: %s", name(key), e.Msg)
			}
		}
	}
	for _, f := range []struct{ key, v string }{{"model", o.Model}, {"agent", o.Agent}} {
		if strings.ContainsAny(f.v, " \t\r\n,") {
			hint := ""
			if !fields {
				hint = " (separate parameters with &&)"
			}
			return errorf("%s %q must be a single name, without blanks or commas%s", name(f.key), f.v, hint)
		}
	}
	if o.As != "" && !namePattern.MatchString(o.As) {
		return errorf("%s %q is not a name: use 1 to 64 letters, digits, _ or -", name("as"), o.As)
	}
	for _, l := range []struct {
		key   string
		items []string
	}{{"return", o.Return}, {"parallel", o.Parallel}} {
		for i, it := range l.items {
			if isBlank(it) {
				return errorf("%s item %d is empty", name(l.key), i+1)
			}
		}
	}
	if o.Loop != nil {
		if o.Loop.Max < 1 {
			return errorf("%s must be a whole number ≥ 1, not %d", name("loop"), o.Loop.Max)
		}
		for _, k := range []string{"until", "untilCommand"} {
			if v := texts[k][0]; v != "" && isBlank(v) {
				return errorf("%s is blank", name(k))
			}
		}
		if o.Loop.Until != "" && o.Loop.UntilCommand != "" {
			return errorf("%s and %s cannot both be set: a loop ends either on a judge's verdict or on a command's exit status",
				name("until"), name("untilCommand"))
		}
	}
	if o.Auto {
		var with []string
		if o.Loop != nil {
			with = append(with, name("loop"))
		}
		if o.Return != nil {
			with = append(with, name("return"))
		}
		if o.Parallel != nil {
			with = append(with, name("parallel"))
		}
		if len(with) > 0 {
			return errorf("%s cannot be combined with %s: the planner writes the whole workflow",
				name("auto"), orList(with))
		}
	}
	return nil
}

// String renders the overrides as a block, keys in a fixed order, values
// quoted where the plain form would read differently. ParseOverrides of the
// result gives back equal overrides. The zero value renders as "{}".
func (o Overrides) String() string {
	var parts []string
	add := func(key string, vals ...string) {
		out := make([]string, len(vals))
		for i, v := range vals {
			out[i] = blockValue(v)
		}
		parts = append(parts, key+":"+strings.Join(out, " || "))
	}
	if o.Model != "" {
		add("model", o.Model)
	}
	if o.Agent != "" {
		add("agent", o.Agent)
	}
	if o.Loop != nil {
		add("loop", strconv.Itoa(o.Loop.Max))
		if o.Loop.Until != "" {
			add("until", o.Loop.Until)
		}
		if o.Loop.UntilCommand != "" {
			add("untilCommand", o.Loop.UntilCommand)
		}
	}
	if o.Return != nil {
		add("return", o.Return...)
	}
	if o.Parallel != nil {
		add("parallel", o.Parallel...)
	}
	if o.As != "" {
		add("as", o.As)
	}
	if o.Auto {
		add("auto", "true")
	}
	return "{" + strings.Join(parts, " && ") + "}"
}

// IsZero reports whether o overrides nothing.
func (o Overrides) IsZero() bool {
	return o.Model == "" && o.Agent == "" && o.Loop == nil && o.Return == nil &&
		o.Parallel == nil && o.As == "" && !o.Auto
}

// blockValue writes v bare when the block parser reads it back unchanged,
// and quoted otherwise.
func blockValue(v string) string {
	if v == "" || v != trimBlanks(v) || strings.ContainsAny(v, "{}\"\n") ||
		strings.Contains(v, "&&") || strings.Contains(v, "||") {
		return quote(v)
	}
	return v
}

// MergeOverrides returns base with every setting of top put over it: a
// command file's frontmatter (base) under the block it was invoked with
// (top). A field set in top replaces base's whole: a loop replaces the
// loop, a return list the return list. It fails with an *Error when the
// result breaks a rule neither side broke alone, such as auto together
// with a return chain.
func MergeOverrides(base, top Overrides) (Overrides, error) {
	m := base
	if top.Model != "" {
		m.Model = top.Model
	}
	if top.Agent != "" {
		m.Agent = top.Agent
	}
	if top.Loop != nil {
		l := *top.Loop
		m.Loop = &l
	} else if base.Loop != nil {
		l := *base.Loop
		m.Loop = &l
	}
	if top.Return != nil {
		m.Return = top.Return
	}
	if top.Parallel != nil {
		m.Parallel = top.Parallel
	}
	if top.As != "" {
		m.As = top.As
	}
	m.Auto = base.Auto || top.Auto
	m.Return = cloneList(m.Return)
	m.Parallel = cloneList(m.Parallel)
	if err := m.check(false); err != nil {
		return Overrides{}, err
	}
	return m, nil
}

func cloneList(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s...)
}
