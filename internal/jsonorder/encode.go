package jsonorder

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// AppendIndent appends the JSON form of v to buf, laid out exactly as
// JavaScript's JSON.stringify(v, null, 2) lays it out: two-space
// indentation, ": " after keys, empty arrays and objects as [] and {}, and
// no trailing newline. Strings are written as AppendString writes them and
// numbers as their json.Number text.
//
// v holds the value types of Object; other types are converted as Set
// converts them.
func AppendIndent(buf []byte, v any) []byte {
	return appendValue(buf, v, 0, true)
}

// AppendCompact appends the JSON form of v to buf as JSON.stringify(v)
// writes it: no white space at all, otherwise as AppendIndent.
func AppendCompact(buf []byte, v any) []byte {
	return appendValue(buf, v, 0, false)
}

func appendNewline(buf []byte, depth int) []byte {
	buf = append(buf, '\n')
	for i := 0; i < depth; i++ {
		buf = append(buf, ' ', ' ')
	}
	return buf
}

func appendValue(buf []byte, v any, depth int, indent bool) []byte {
	switch v := v.(type) {
	case nil:
		return append(buf, "null"...)
	case bool:
		return strconv.AppendBool(buf, v)
	case string:
		return AppendString(buf, v)
	case json.Number:
		return append(buf, v...)
	case *Object:
		if v.Len() == 0 {
			return append(buf, "{}"...)
		}
		buf = append(buf, '{')
		for i, k := range v.keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			if indent {
				buf = appendNewline(buf, depth+1)
			}
			buf = AppendString(buf, k)
			buf = append(buf, ':')
			if indent {
				buf = append(buf, ' ')
			}
			buf = appendValue(buf, v.vals[i], depth+1, indent)
		}
		if indent {
			buf = appendNewline(buf, depth)
		}
		return append(buf, '}')
	case []any:
		if len(v) == 0 {
			return append(buf, "[]"...)
		}
		buf = append(buf, '[')
		for i, e := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			if indent {
				buf = appendNewline(buf, depth+1)
			}
			buf = appendValue(buf, e, depth+1, indent)
		}
		if indent {
			buf = appendNewline(buf, depth)
		}
		return append(buf, ']')
	default:
		return appendValue(buf, normalize(v), depth, indent)
	}
}

// normalize converts the Go values callers may pass to Set into the value
// types an Object holds.
func normalize(v any) any {
	switch v := v.(type) {
	case nil, bool, string, json.Number, *Object:
		return v
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalize(e)
		}
		return out
	case []string:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = e
		}
		return out
	case map[string]any:
		// Go maps have no order: keys are added sorted so output is stable.
		obj := NewObject()
		for _, k := range slices.Sorted(maps.Keys(v)) {
			obj.Set(k, v[k])
		}
		return obj
	case int:
		return json.Number(strconv.FormatInt(int64(v), 10))
	case int32:
		return json.Number(strconv.FormatInt(int64(v), 10))
	case int64:
		return json.Number(strconv.FormatInt(v, 10))
	case uint32:
		return json.Number(strconv.FormatUint(uint64(v), 10))
	case uint64:
		return json.Number(strconv.FormatUint(v, 10))
	case float64:
		return floatNumber(v)
	case float32:
		return floatNumber(float64(v))
	default:
		panic(fmt.Sprintf("jsonorder: value of type %T has no JSON form", v))
	}
}

// floatNumber is the json.Number Set stores for f. NaN and the infinities
// have no JSON form; they are stored as 0.
func floatNumber(f float64) json.Number {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "0"
	}
	return json.Number(FormatNumber(f))
}

// FormatNumber formats f exactly as JavaScript's Number.prototype.toString
// does (and so as JSON.stringify writes a finite number): the shortest
// digits that round-trip, in fixed notation from 1e-6 up to 1e21 and as
// "1.5e-7" or "1e+21" outside it; -0 is "0", and NaN and the infinities are
// "NaN", "Infinity" and "-Infinity".
func FormatNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	if abs := math.Abs(f); abs >= 1e-6 && abs < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // 1e+21, 1.5e-07
	mant, exp, _ := strings.Cut(s, "e")
	digits := strings.TrimLeft(exp[1:], "0")
	return mant + "e" + exp[:1] + digits
}
