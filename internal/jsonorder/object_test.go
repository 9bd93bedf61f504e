package jsonorder_test

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/taskd/taskd/internal/jsonorder"
)

func TestObject_OrderAndDelete(t *testing.T) {
	o := jsonorder.NewObject()
	o.Set("b", 1)
	o.Set("a", "x")
	o.Set("b", 2) // keeps its place
	o.EnsureObject("c").Set("d", []string{"e"})
	o.Delete("a")
	o.Delete("missing")
	got := string(jsonorder.AppendIndent(nil, o))
	want := "{\n  \"b\": 2,\n  \"c\": {\n    \"d\": [\n      \"e\"\n    ]\n  }\n}"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	c := o.Clone()
	c.Object("c").Set("d", "changed")
	if got2 := string(jsonorder.AppendIndent(nil, o)); got2 != want {
		t.Errorf("Clone shares state with the original: %s", got2)
	}
}

// TestObject_ManyKeys checks lookups, replacement and deletion in an object
// large enough to be indexed, decoded and built.
func TestObject_ManyKeys(t *testing.T) {
	built := jsonorder.NewObject()
	doc := "{"
	for i := range 40 {
		built.Set(fmt.Sprintf("k%d", i), i)
		if i > 0 {
			doc += ","
		}
		doc += fmt.Sprintf(`"k%d": %d`, i, i)
	}
	v, err := jsonorder.Decode([]byte(doc+"}"), jsonorder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]*jsonorder.Object{"built": built, "decoded": v.(*jsonorder.Object), "cloned": built.Clone()} {
		o.Set("k7", "seven")
		for i := 0; i < 40; i += 2 {
			o.Delete(fmt.Sprintf("k%d", i))
		}
		if got, want := o.Len(), 20; got != want {
			t.Errorf("%s: Len() = %d, want %d", name, got, want)
		}
		if s, _ := o.String("k7"); s != "seven" {
			t.Errorf("%s: k7 = %q, want seven", name, s)
		}
		if n, ok := o.Int("k39"); !ok || n != 39 {
			t.Errorf("%s: k39 = %d, %v, want 39", name, n, ok)
		}
		if o.Has("k38") || !o.Has("k1") {
			t.Errorf("%s: Has(k38), Has(k1) = %v, %v, want false, true", name, o.Has("k38"), o.Has("k1"))
		}
		if got := o.Keys()[:3]; !reflect.DeepEqual(got, []string{"k1", "k3", "k5"}) {
			t.Errorf("%s: Keys() start %q", name, got)
		}
	}
}

func TestObject_Accessors(t *testing.T) {
	v, err := jsonorder.Decode([]byte(`{"s": "x", "b": true, "i": 3, "f": 2.5, "e": 1e3, "big": 1e300, "o": {}, "n": null}`), jsonorder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*jsonorder.Object)
	if s, ok := o.String("s"); s != "x" || !ok {
		t.Errorf("String(s) = %q, %v", s, ok)
	}
	if _, ok := o.String("b"); ok {
		t.Errorf("String(b) ok")
	}
	if b, ok := o.Bool("b"); !b || !ok {
		t.Errorf("Bool(b) = %v, %v", b, ok)
	}
	for _, tt := range []struct {
		key string
		n   int64
		ok  bool
	}{{"i", 3, true}, {"e", 1000, true}, {"f", 0, false}, {"big", 0, false}, {"s", 0, false}, {"absent", 0, false}} {
		if n, ok := o.Int(tt.key); n != tt.n || ok != tt.ok {
			t.Errorf("Int(%s) = %d, %v, want %d, %v", tt.key, n, ok, tt.n, tt.ok)
		}
	}
	if f, ok := o.Float("f"); f != 2.5 || !ok {
		t.Errorf("Float(f) = %v, %v", f, ok)
	}
	if o.Object("o") == nil || o.Object("s") != nil {
		t.Errorf("Object(o), Object(s) = %v, %v", o.Object("o"), o.Object("s"))
	}
	if o.EnsureObject("s"); o.Object("s") == nil {
		t.Errorf("EnsureObject(s) left a string")
	}
	var keys []string
	for k := range o.All() {
		keys = append(keys, k)
		if k == "i" {
			break
		}
	}
	if want := []string{"s", "b", "i"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("All() = %q, want %q", keys, want)
	}
	var none *jsonorder.Object
	if none.Len() != 0 || none.Has("x") || none.Keys() != nil || none.Clone() != nil {
		t.Errorf("a nil *Object is not empty")
	}
}

func TestObject_SetConverts(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{3, "3"},
		{int32(-4), "-4"},
		{int64(-9), "-9"},
		{uint32(7), "7"},
		{uint64(1 << 63), "9223372036854775808"},
		{1.5, "1.5"},
		{float32(0.5), "0.5"},
		{1234567.0, "1234567"},
		{1e21, "1e+21"},
		{1.5e-7, "1.5e-7"},
		{0.000001, "0.000001"},
		{math.NaN(), "0"},
		{math.Inf(-1), "0"},
		{json.Number("1E2"), "1E2"},
		{[]string{"a"}, `["a"]`},
		{[]any{1, []any{int64(2)}}, `[1,[2]]`},
		{map[string]any{"b": 1, "a": nil}, `{"a":null,"b":1}`},
	}
	for _, tt := range tests {
		o := jsonorder.NewObject()
		o.Set("n", tt.in)
		if got := string(jsonorder.AppendCompact(nil, o)); got != `{"n":`+tt.want+`}` {
			t.Errorf("Set(%v) encodes as %s, want %s", tt.in, got, tt.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Errorf("Set of a channel did not panic")
		}
	}()
	jsonorder.NewObject().Set("c", make(chan int))
}

func TestTypeName(t *testing.T) {
	for v, want := range map[any]string{nil: "null", true: "a boolean", "s": "a string", json.Number("1"): "a number", jsonorder.NewObject(): "an object"} {
		if got := jsonorder.TypeName(v); got != want {
			t.Errorf("TypeName(%#v) = %q, want %q", v, got, want)
		}
	}
	if got := jsonorder.TypeName([]any{}); got != "an array" {
		t.Errorf("TypeName([]any{}) = %q", got)
	}
}
