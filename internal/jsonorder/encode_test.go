package jsonorder_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/taskd/taskd/internal/jsonorder"
)

func TestAppendString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "abc", `"abc"`},
		{"html stays raw", "<a href='x'>&amp;</a>", `"<a href='x'>&amp;</a>"`},
		{"short escapes", "\"\\\b\f\n\r\t", `"\"\\\b\f\n\r\t"`},
		{"other controls", "\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f\""},
		{"raw unicode", "é\u2028\u2029😀", "\"é\u2028\u2029😀\""},
		{"lone high", "a\xed\xa0\x80b", `"a\ud800b"`},
		{"lone low at the end", "\xed\xbf\xbf", `"\udfff"`},
		{"halves that pair", "\xed\xa0\xbd\xed\xb8\x80", `"😀"`},
		{"low then high", "\xed\xb8\x80\xed\xa0\xbd", `"\ude00\ud83d"`},
		{"invalid byte", "a\xffb", "\"a\ufffdb\""},
		{"cut sequence", "\xe2\x82z", "\"\ufffdz\""},
		{"cut surrogate", "\xed\xa0", "\"\ufffd\ufffd\""},
		{"empty", "", `""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(jsonorder.AppendString(nil, tt.in)); got != tt.want {
				t.Errorf("AppendString(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestAppendIndentAndCompact(t *testing.T) {
	v, err := jsonorder.Decode([]byte(`{"a": [1, {"b": null}, [], {}], "c": "d", "e": true}`), jsonorder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"indent", jsonorder.AppendIndent([]byte("x"), v),
			"x{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    },\n    [],\n    {}\n  ],\n  \"c\": \"d\",\n  \"e\": true\n}"},
		{"compact", jsonorder.AppendCompact(nil, v), `{"a":[1,{"b":null},[],{}],"c":"d","e":true}`},
		{"scalar", jsonorder.AppendIndent(nil, json.Number("-1.50")), `-1.50`},
		{"go values", jsonorder.AppendCompact(nil, []any{int64(1), []string{"x"}, false}), `[1,["x"],false]`},
	}
	for _, tt := range tests {
		if string(tt.got) != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestFormatNumber(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "0"},
		{1, "1"},
		{-2.5, "-2.5"},
		{0.1, "0.1"},
		{1e-6, "0.000001"},
		{1.5e-7, "1.5e-7"},
		{123e-20, "1.23e-18"},
		{1e20, "100000000000000000000"},
		{1e21, "1e+21"},
		{-1.7976931348623157e308, "-1.7976931348623157e+308"},
		{5e-324, "5e-324"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
	}
	for _, tt := range tests {
		if got := jsonorder.FormatNumber(tt.in); got != tt.want {
			t.Errorf("FormatNumber(%v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
