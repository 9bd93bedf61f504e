package jsonorder

import (
	"encoding/json"
	"iter"
	"math"
	"slices"
)

// indexFrom is the number of keys above which an Object keeps a map from
// key to position; smaller objects, which is nearly all of them, are
// searched.
const indexFrom = 16

// Object is a JSON object that remembers the order of its keys. Decode
// builds Objects in the order its Options ask for; keys added later with Set
// are appended.
//
// Values held by an Object are always one of: nil (JSON null), bool, string,
// json.Number, []any and *Object. Set converts the other Go types it accepts
// (integers, floats, []string, map[string]any built by callers) into these.
//
// The zero Object is empty and ready to use. An Object is not safe for
// concurrent use while it is being changed; reading it from several
// goroutines is safe.
type Object struct {
	keys  []string
	vals  []any
	index map[string]int // key → position, only above indexFrom keys
}

// NewObject returns an empty object.
func NewObject() *Object {
	return &Object{}
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

// All yields the keys and their values in order.
func (o *Object) All() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		if o == nil {
			return
		}
		for i, k := range o.keys {
			if !yield(k, o.vals[i]) {
				return
			}
		}
	}
}

// find returns the position of key, or -1.
func (o *Object) find(key string) int {
	if o == nil {
		return -1
	}
	if o.index != nil {
		if i, ok := o.index[key]; ok {
			return i
		}
		return -1
	}
	for i, k := range o.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// reindex rebuilds the key index, or drops it when the object is small.
func (o *Object) reindex() {
	if len(o.keys) <= indexFrom {
		o.index = nil
		return
	}
	o.index = make(map[string]int, 2*len(o.keys))
	for i, k := range o.keys {
		o.index[k] = i
	}
}

// Grow makes room for n more keys, so that adding them does not allocate.
func (o *Object) Grow(n int) {
	o.keys = slices.Grow(o.keys, n)
	o.vals = slices.Grow(o.vals, n)
}

// Has reports whether key is present (with any value, null included).
func (o *Object) Has(key string) bool {
	return o.find(key) >= 0
}

// Get returns the value of key and whether it is present.
func (o *Object) Get(key string) (any, bool) {
	if i := o.find(key); i >= 0 {
		return o.vals[i], true
	}
	return nil, false
}

// Set sets key to v, keeping the key's position if it exists and appending it
// otherwise. It panics if v is of a type that has no JSON form, which is a
// programming error. Slices are copied.
func (o *Object) Set(key string, v any) {
	v = normalize(v)
	if i := o.find(key); i >= 0 {
		o.vals[i] = v
		return
	}
	o.keys = append(o.keys, key)
	o.vals = append(o.vals, v)
	if o.index != nil {
		o.index[key] = len(o.keys) - 1
	} else if len(o.keys) > indexFrom {
		o.reindex()
	}
}

// Delete removes key. Deleting a missing key is a no-op.
func (o *Object) Delete(key string) {
	i := o.find(key)
	if i < 0 {
		return
	}
	o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
	o.vals = append(o.vals[:i:i], o.vals[i+1:]...)
	if o.index != nil {
		o.reindex()
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
	c := &Object{keys: append([]string(nil), o.keys...), vals: make([]any, len(o.vals))}
	for i, v := range o.vals {
		c.vals[i] = cloneValue(v)
	}
	if o.index != nil {
		c.reindex()
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

// TypeName names the JSON type of a value ("null", "a boolean", "a
// string", "a number", "an array", "an object") for error messages.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case *Object:
		return "an object"
	case []any:
		return "an array"
	default:
		return "a number"
	}
}
