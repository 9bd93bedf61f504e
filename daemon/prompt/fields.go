package prompt

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// The canonical form of Overrides is a set of fields in metadata.taskd:
//
//	"model": "opus", "agent": "build", "as": "plan", "auto": true,
//	"loop": {"max": 5, "until": "tests pass", "untilCommand": "make test"},
//	"return": ["review it", "/ship"], "parallel": ["/a x", "/b y"]
//
// A block is only a way to write them; the daemon stores the fields.

// fieldsPrefix is where the fields live in a task file; errors name it.
const fieldsPrefix = "metadata.taskd."

// Fields returns the overrides as canonical metadata.taskd fields, ready
// for encoding/json (maps are encoded with sorted keys, so the output is
// deterministic). Only the settings that are set appear; the zero value
// gives an empty map. Values are strings, true, ints, []string and, for
// loop, a map[string]any.
func (o Overrides) Fields() map[string]any {
	m := map[string]any{}
	if o.Model != "" {
		m["model"] = o.Model
	}
	if o.Agent != "" {
		m["agent"] = o.Agent
	}
	if o.Loop != nil {
		l := map[string]any{"max": o.Loop.Max}
		if o.Loop.Until != "" {
			l["until"] = o.Loop.Until
		}
		if o.Loop.UntilCommand != "" {
			l["untilCommand"] = o.Loop.UntilCommand
		}
		m["loop"] = l
	}
	if o.Return != nil {
		m["return"] = cloneList(o.Return)
	}
	if o.Parallel != nil {
		m["parallel"] = cloneList(o.Parallel)
	}
	if o.As != "" {
		m["as"] = o.As
	}
	if o.Auto {
		m["auto"] = true
	}
	return m
}

// object is a JSON object other than a map[string]any, such as the
// ordered objects of package taskfile.
type object interface {
	Keys() []string
	Get(key string) (any, bool)
}

// OverridesFromFields reads overrides back from metadata.taskd fields: the
// map Fields returns, or what a JSON decoder gives for it (numbers as
// float64 or json.Number, arrays as []any, objects as map[string]any or
// any value with Keys() []string and Get(string) (any, bool)). Keys other
// than model, agent, loop, return, parallel, as and auto are not read; a
// null or empty value means not set, except an empty as, which is refused. A field of the wrong type or value
// fails with an *Error naming it, such as
// "metadata.taskd.loop.max must be a whole number ≥ 1 (it is a string)".
func OverridesFromFields(m map[string]any) (Overrides, error) {
	var o Overrides
	var err *Error
	str := func(key string) string {
		v, ok := m[key].(string)
		if !ok && m[key] != nil && err == nil {
			err = fieldErr(key, m[key], "must be a string")
		}
		return v
	}
	o.Model, o.Agent, o.As = str("model"), str("agent"), str("as")
	if v, ok := m["as"].(string); ok && v == "" && err == nil {
		// A name given empty is a mistake, not a name left unset: the
		// result would go by the task's own name, and two such could
		// collide unseen.
		err = fieldErr("as", v, "is empty: give the name the result goes by (1 to 64 letters, digits, _ or -), or remove the field")
	}
	if v := m["auto"]; v != nil {
		b, ok := v.(bool)
		if !ok && err == nil {
			err = fieldErr("auto", v, "must be true or false")
		}
		o.Auto = b
	}
	if err == nil {
		o.Return, err = fieldList("return", m["return"])
	}
	if err == nil {
		o.Parallel, err = fieldList("parallel", m["parallel"])
	}
	if err == nil && m["loop"] != nil {
		o.Loop, err = fieldLoop(m["loop"])
	}
	if err == nil {
		err = o.check(true)
	}
	if err != nil {
		return Overrides{}, err
	}
	return o, nil
}

func fieldList(key string, v any) ([]string, *Error) {
	var out []string
	switch v := v.(type) {
	case nil:
		return nil, nil
	case []string:
		out = cloneList(v)
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fieldErr(key, v, `must be an array of strings such as ["run the tests", "/review src"]`)
			}
			out = append(out, s)
		}
	default:
		return nil, fieldErr(key, v, `must be an array of strings such as ["run the tests", "/review src"]`)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func fieldLoop(v any) (*Loop, *Error) {
	const example = `must be an object such as {"max": 5, "until": "the tests pass"}`
	get := func(string) (any, bool) { return nil, false }
	var keys []string
	switch v := v.(type) {
	case map[string]any:
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		get = func(k string) (any, bool) { e, ok := v[k]; return e, ok }
	case object:
		keys, get = v.Keys(), v.Get
	default:
		return nil, fieldErr("loop", v, example)
	}
	l := &Loop{}
	for _, k := range keys {
		e, _ := get(k)
		switch k {
		case "max":
			if e == nil {
				continue
			}
			n, ok := wholeNumber(e)
			if !ok || n < 1 {
				return nil, fieldErr("loop.max", e, "must be a whole number ≥ 1")
			}
			l.Max = n
		case "until", "untilCommand":
			s, ok := e.(string)
			if !ok && e != nil {
				return nil, fieldErr("loop."+k, e, "must be a string")
			}
			if k == "until" {
				l.Until = s
			} else {
				l.UntilCommand = s
			}
		default:
			return nil, errorf("%sloop.%s is not a loop field (known: max, until, untilCommand)", fieldsPrefix, k)
		}
	}
	if l.Max == 0 {
		if l.Until == "" && l.UntilCommand == "" {
			return nil, errorf(`%sloop needs max, until or untilCommand, as in {"max": 5}`, fieldsPrefix)
		}
		l.Max = DefaultLoopMax
	}
	return l, nil
}

// wholeNumber reads a JSON number that is a whole number fitting an int.
func wholeNumber(v any) (int, bool) {
	var f float64
	switch v := v.(type) {
	case int:
		return v, true
	case int64:
		return int(v), v == int64(int(v))
	case float64:
		f = v
	case json.Number:
		if n, err := strconv.ParseInt(string(v), 10, 0); err == nil {
			return int(n), true
		}
		var err error
		if f, err = v.Float64(); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int(f), true
}

func fieldErr(key string, v any, rule string) *Error {
	return errorf("%s%s %s (it is %s)", fieldsPrefix, key, rule, describe(v))
}

// describe names a decoded JSON value for error messages.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprint(v)
	case string:
		return "the string " + strconv.Quote(clip(v, 40))
	case int, int64, float64, json.Number:
		return fmt.Sprint(v)
	case []any, []string:
		return "an array"
	default:
		return "an object"
	}
}
