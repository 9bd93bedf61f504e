package taskfile

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Object is a JSON object that remembers the order of its keys. Task files
// are read into Objects so that a read-modify-write keeps every key taskd does
// not understand, in the place the writer put it; keys added later are
// appended.
//
// Values held by an Object are always one of: nil (JSON null), bool, string,
// json.Number, []any and *Object. Set converts the other Go types it accepts
// (integers, floats, []string, map[string]any built by callers) into these.
//
// An Object is not safe for concurrent use.
type Object struct {
	keys []string
	vals map[string]any
}

// NewObject returns an empty object.
func NewObject() *Object {
	return &Object{vals: make(map[string]any)}
}

// Len reports the number of keys.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.keys)
}

// Keys returns the keys in order. The slice must not be modified.
func (o *Object) Keys() []string {
	if o == nil {
		return nil
	}
	return o.keys
}

// Has reports whether key is present (with any value, null included).
func (o *Object) Has(key string) bool {
	if o == nil {
		return false
	}
	_, ok := o.vals[key]
	return ok
}

// Get returns the value of key and whether it is present.
func (o *Object) Get(key string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.vals[key]
	return v, ok
}

// Set sets key to v, keeping the key's position if it exists and appending it
// otherwise. It panics if v is of a type that has no JSON form, which is a
// programming error.
func (o *Object) Set(key string, v any) {
	v = normalize(v)
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// Delete removes key. Deleting a missing key is a no-op.
func (o *Object) Delete(key string) {
	if o == nil {
		return
	}
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

// Object returns the nested object under key, or nil if key is absent or not
// an object.
func (o *Object) Object(key string) *Object {
	v, _ := o.Get(key)
	obj, _ := v.(*Object)
	return obj
}

// EnsureObject returns the nested object under key, creating it (appended) if
// key is absent or holds something other than an object.
func (o *Object) EnsureObject(key string) *Object {
	if obj := o.Object(key); obj != nil {
		return obj
	}
	obj := NewObject()
	o.Set(key, obj)
	return obj
}

// String returns the string under key; ok is false if absent or not a string.
func (o *Object) String(key string) (s string, ok bool) {
	v, _ := o.Get(key)
	s, ok = v.(string)
	return s, ok
}

// Bool returns the boolean under key; ok is false if absent or not a boolean.
func (o *Object) Bool(key string) (b bool, ok bool) {
	v, _ := o.Get(key)
	b, ok = v.(bool)
	return b, ok
}

// Int returns the number under key as an int64; ok is false if absent, not a
// number, or not an integer.
func (o *Object) Int(key string) (n int64, ok bool) {
	v, _ := o.Get(key)
	num, isNum := v.(json.Number)
	if !isNum {
		return 0, false
	}
	if n, err := num.Int64(); err == nil {
		return n, true
	}
	f, err := num.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// Float returns the number under key; ok is false if absent or not a number.
func (o *Object) Float(key string) (f float64, ok bool) {
	v, _ := o.Get(key)
	num, isNum := v.(json.Number)
	if !isNum {
		return 0, false
	}
	f, err := num.Float64()
	return f, err == nil
}

// Clone returns a deep copy of o.
func (o *Object) Clone() *Object {
	if o == nil {
		return nil
	}
	c := &Object{keys: append([]string(nil), o.keys...), vals: make(map[string]any, len(o.vals))}
	for k, v := range o.vals {
		c.vals[k] = cloneValue(v)
	}
	return c
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case *Object:
		return v.Clone()
	case []any:
		c := make([]any, len(v))
		for i, e := range v {
			c[i] = cloneValue(e)
		}
		return c
	default:
		return v
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
		for _, k := range sortedKeys(v) {
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
		return json.Number(formatFloat(v))
	case float32:
		return json.Number(formatFloat(float64(v)))
	default:
		panic(fmt.Sprintf("taskfile: value of type %T has no JSON form", v))
	}
}

// formatFloat formats f the way JavaScript's Number.prototype.toString does,
// so numbers taskd writes look like the ones Claude Code writes. NaN and the
// infinities have no JSON form; like JSON.stringify they become null's
// closest number, 0.
func formatFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "0"
	}
	if f == 0 {
		return "0"
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // 1e+21, 1.5e-07
	mant, exp, _ := cutByte(s, 'e')
	sign := exp[0]
	digits := exp[1:]
	for len(digits) > 1 && digits[0] == '0' {
		digits = digits[1:]
	}
	return mant + "e" + string(sign) + digits
}

func cutByte(s string, b byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
