package jsonorder_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/taskd/taskd/internal/jsonorder"
)

func TestDecode_Errors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", ``, "line 1, column 1: unexpected end of file, expected a value"},
		{"trailing comma", `{"a": 1,}`, `line 1, column 9: unexpected '}', expected a quoted key`},
		{"duplicate key", "{\"a\": 1,\n \"a\": 2}", `line 2, column 2: key "a" appears twice in one object`},
		{"duplicate key of many", `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":0}`,
			`line 1, column 144: key "k3" appears twice in one object`},
		{"two values", `{} {}`, `line 1, column 4: unexpected '{' after the end of the JSON value`},
		{"missing colon", `{"a" 1}`, `line 1, column 6: unexpected '1', expected ':' after key "a"`},
		{"bad literal", `{"a": tru}`, `line 1, column 7: invalid literal, expected "true"`},
		{"leading zero number", `[01]`, `line 1, column 3: unexpected '1', expected ',' or ']'`},
		{"no fraction digits", `[1.]`, `line 1, column 4: invalid number: no digits after '.'`},
		{"no exponent digits", `[1e+]`, `line 1, column 5: invalid number: no digits in exponent`},
		{"minus alone", `[-]`, `line 1, column 3: invalid number`},
		{"raw newline in string", "[\"a\nb\"]", `line 1, column 4: control character 0x0a in a string (write it as an escape such as \n)`},
		{"bad escape", `["\x"]`, `line 1, column 4: invalid escape '\x' in a string`},
		{"short unicode escape", `["\u12"]`, `line 1, column 7: invalid \u escape: '"' is not a hex digit`},
		{"bad low half", `["\ud800\u12x4"]`, `line 1, column 13: invalid \u escape: 'x' is not a hex digit`},
		{"escape at the end", `["\`, `line 1, column 4: unexpected end of file in a string escape`},
		{"invalid utf-8", "[\"a\xffb\"]", `line 1, column 4: invalid UTF-8 (byte 0xff); save the file as UTF-8`},
		{"invalid utf-8 after an escape", "[\"\\n\xed\xa0\x80\"]", `line 1, column 5: invalid UTF-8 (byte 0xed); save the file as UTF-8`},
		{"unterminated", `{"a": "b`, `line 1, column 9: unexpected end of file in a string`},
		{"unterminated object", `{"a": 1`, `line 1, column 8: unexpected end of file, expected ',' or '}'`},
		{"binary", "\x00", `line 1, column 1: unexpected byte 0x00, expected a value`},
		{"deep", strings.Repeat("[", 300) + strings.Repeat("]", 300), "line 1, column 257: nested deeper than 256 levels"},
		{"deep objects", strings.Repeat(`{"a":`, 300), "line 1, column 1281: nested deeper than 256 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jsonorder.Decode([]byte(tt.in), jsonorder.Options{})
			var se *jsonorder.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Decode(%q) error = %v, want a *SyntaxError", tt.in, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Decode(%q) error\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestDecode_Values(t *testing.T) {
	v, err := jsonorder.Decode([]byte(`{"z": 1, "a": [true, false, null, -0.5e+3, "\u00e9\ud83d\ude00\n"], "m": {}}`), jsonorder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	obj := v.(*jsonorder.Object)
	if got, want := obj.Keys(), []string{"z", "a", "m"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Keys() = %q, want %q", got, want)
	}
	arr, _ := obj.Get("a")
	if got, want := arr, []any{true, false, nil, json.Number("-0.5e+3"), "é😀\n"}; !reflect.DeepEqual(got, want) {
		t.Errorf("a = %#v, want %#v", got, want)
	}
	if m := obj.Object("m"); m == nil || m.Len() != 0 {
		t.Errorf("m = %#v, want an empty object", m)
	}
}

// TestDecode_Surrogates checks the bytes a string's escapes decode to (a
// pair to its character, a lone half to its three-byte form) and how
// AppendString writes them back, as JSON.stringify would.
func TestDecode_Surrogates(t *testing.T) {
	tests := []struct {
		in, want, quoted string
	}{
		{`"\ud83d\ude00"`, "😀", `"😀"`},
		{`"\uD83D\uDE00"`, "😀", `"😀"`},
		{`"\ud800"`, "\xed\xa0\x80", `"\ud800"`},
		{`"\uDBFF"`, "\xed\xaf\xbf", `"\udbff"`},
		{`"\udc00"`, "\xed\xb0\x80", `"\udc00"`},
		{`"\udfffz"`, "\xed\xbf\xbfz", `"\udfffz"`},
		{`"\ud800\ud800"`, "\xed\xa0\x80\xed\xa0\x80", `"\ud800\ud800"`},
		{`"\ude00\ud83d"`, "\xed\xb8\x80\xed\xa0\xbd", `"\ude00\ud83d"`},
		{`"\ud83d\ud83d\ude00"`, "\xed\xa0\xbd😀", `"\ud83d😀"`},
		{`"\ud800\u0041"`, "\xed\xa0\x80A", `"\ud800A"`},
		{`"\ud800\n"`, "\xed\xa0\x80\n", `"\ud800\n"`},
		{`"\ud7ff\ue000"`, "\ud7ff\ue000", "\"\ud7ff\ue000\""},
	}
	for _, tt := range tests {
		v, err := jsonorder.Decode([]byte(tt.in), jsonorder.Options{})
		if err != nil {
			t.Errorf("Decode(%s): %v", tt.in, err)
			continue
		}
		if got := v.(string); got != tt.want {
			t.Errorf("Decode(%s) = %q, want %q", tt.in, got, tt.want)
		}
		if got := string(jsonorder.AppendString(nil, v.(string))); got != tt.quoted {
			t.Errorf("AppendString(Decode(%s)) = %s, want %s", tt.in, got, tt.quoted)
		}
	}
}

// TestDecode_Options checks each option on its own.
func TestDecode_Options(t *testing.T) {
	var dups []string
	tests := []struct {
		name string
		opts jsonorder.Options
		in   string
		want string // the compact encoding, or the error
	}{
		{"file order", jsonorder.Options{}, `{"b": 1, "10": 2, "2": 3}`, `{"b":1,"10":2,"2":3}`},
		{"javascript order", jsonorder.Options{JavaScriptOrder: true}, `{"b": 1, "10": 2, "a": {"x": 0, "1": 0}, "2": 3, "4294967295": 4, "007": 5}`,
			`{"2":3,"10":2,"b":1,"a":{"1":0,"x":0},"4294967295":4,"007":5}`},
		{"last value wins", jsonorder.Options{Duplicate: func(o *jsonorder.Object, key string) { dups = append(dups, key) }},
			`{"a": 1, "b": {"c": 1, "c": 2}, "a": 3, "b": 4}`, `{"a":3,"b":4}`},
		{"numbers as written", jsonorder.Options{}, `[1.0, -0, 1E+2, 12.50]`, `[1.0,-0,1E+2,12.50]`},
		{"javascript numbers", jsonorder.Options{JavaScriptNumbers: true}, `[1.0, -0, 1E+2, 12.50, 1e400, 10000000000000001]`, `[1,0,100,12.5,1e400,10000000000000000]`},
		{"replace invalid utf-8", jsonorder.Options{ReplaceInvalidUTF8: true}, "[\"a\xffb\", \"\\n\xe2\x82\"]", "[\"a\ufffdb\",\"\\n\ufffd\"]"},
		{"max depth", jsonorder.Options{MaxDepth: 2}, `[[[]]]`, "line 1, column 3: nested deeper than 2 levels"},
		{"within max depth", jsonorder.Options{MaxDepth: 2}, `[[1]]`, `[[1]]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			if v, err := jsonorder.Decode([]byte(tt.in), tt.opts); err != nil {
				got = err.Error()
			} else {
				got = string(jsonorder.AppendCompact(nil, v))
			}
			if got != tt.want {
				t.Errorf("Decode(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
	if want := []string{"c", "a", "b"}; !reflect.DeepEqual(dups, want) {
		t.Errorf("Duplicate saw %q, want %q", dups, want)
	}
}

// TestDecodeRune checks that DecodeRune reads a lone surrogate as one code
// point and any other invalid byte as one byte.
func TestDecodeRune(t *testing.T) {
	tests := []struct {
		in   string
		r    rune
		size int
	}{
		{"a", 'a', 1},
		{"é", 'é', 2},
		{"😀", '😀', 4},
		{"\xed\xa0\x80x", 0xD800, 3},
		{"\xed\xbf\xbf", 0xDFFF, 3},
		{"\xed\xa0", 0xFFFD, 1},
		{"\xff", 0xFFFD, 1},
		{"", 0xFFFD, 0},
	}
	for _, tt := range tests {
		if r, size := jsonorder.DecodeRune(tt.in); r != tt.r || size != tt.size {
			t.Errorf("DecodeRune(%q) = %U, %d, want %U, %d", tt.in, r, size, tt.r, tt.size)
		}
	}
}
