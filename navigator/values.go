package navigator

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/taskd/taskd/internal/jsonorder"
)

// The task file is data someone else wrote, so the navigator reads its
// metadata the way flow's JavaScript reads it: a value is "set" when it is
// truthy, and it is used as text after JavaScript's string conversion. The
// helpers below are the only places that know those rules.

// truthy reports whether v is truthy in JavaScript. v is a decoded JSON
// value: nil, bool, string, a number (json.Number, float64 or int), or an
// object or array of any representation (always truthy).
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		return err != nil || (f != 0 && !math.IsNaN(f))
	case float64:
		return v != 0 && !math.IsNaN(v)
	case int:
		return v != 0
	case int64:
		return v != 0
	default:
		return true
	}
}

// text returns v as JavaScript would interpolate it into a string, or ""
// when v is falsy. It is how the navigator reads metadata strings such as
// workflowType, currentStep and userDescription.
func text(v any) string {
	if !truthy(v) {
		return ""
	}
	switch v := v.(type) {
	case string:
		return v
	case bool:
		return "true"
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return string(v)
		}
		return jsonorder.FormatNumber(f)
	case float64:
		return jsonorder.FormatNumber(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			if e != nil {
				parts[i] = text(e)
			}
		}
		return strings.Join(parts, ",")
	default:
		return "[object Object]"
	}
}

// idText renders a task's id the way flow's mismatch warning prints it:
// "undefined" when the key is absent, JavaScript's string form otherwise.
func idText(v any, present bool) string {
	switch {
	case !present:
		return "undefined"
	case v == nil:
		return "null"
	case v == false:
		return "false"
	case v == "":
		return ""
	}
	if s := text(v); s != "" {
		return s
	}
	return "0" // the only falsy value left is a zero number
}

// count coerces a retry counter or budget to an int. This is a deliberate
// deviation from flow, which uses the raw value (so the string "1" plus one
// becomes "11"): a number is truncated toward zero, a string holding a
// number counts as that number, and anything else (absent, null, booleans,
// other strings, objects) counts as 0. See docs/navigator.md.
func count(v any) int {
	var f float64
	switch v := v.(type) {
	case json.Number:
		var err error
		if f, err = strconv.ParseFloat(string(v), 64); err != nil {
			return 0
		}
	case float64:
		f = v
	case int:
		return v
	case int64:
		f = float64(v)
	case string:
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
			return 0
		}
	default:
		return 0
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1<<53 {
		return 0
	}
	return int(f)
}
