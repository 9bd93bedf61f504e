// Package jsonorder is the ordered JSON object, reduced to its methods.
package jsonorder

// Object is a JSON object.
type Object struct{ m map[string]any }

func (o *Object) Get(key string) (any, bool)       { v, ok := o.m[key]; return v, ok }
func (o *Object) Has(key string) bool              { _, ok := o.m[key]; return ok }
func (o *Object) Object(key string) *Object        { v, _ := o.m[key].(*Object); return v }
func (o *Object) EnsureObject(key string) *Object  { return o.Object(key) }
func (o *Object) String(key string) (string, bool) { v, ok := o.m[key].(string); return v, ok }
func (o *Object) Int(key string) (int64, bool)     { v, ok := o.m[key].(int64); return v, ok }
func (o *Object) Set(key string, v any)            { o.m[key] = v }
func (o *Object) Delete(key string)                { delete(o.m, key) }
func (o *Object) Len() int                         { return len(o.m) }
