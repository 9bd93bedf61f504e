package jsonorder_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/taskd/taskd/internal/jsonorder"
)

// FuzzRoundTrip decodes arbitrary input with a file's options and with
// JSON.parse's and checks, for whatever decodes: the input was valid JSON;
// read as JSON.parse reads it, it holds the values encoding/json finds;
// both layouts decode again, strictly, to the same value; and encoding is
// stable (decode, encode, decode, encode gives the same bytes). Strict
// decoding may refuse valid JSON only for a repeated key, invalid UTF-8 or
// depth. The seed corpus is in testdata/fuzz/FuzzRoundTrip; run it longer
// with
//
//	go test -fuzz=FuzzRoundTrip ./internal/jsonorder
func FuzzRoundTrip(f *testing.F) {
	for _, doc := range stringifyDocs {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, opts := range []jsonorder.Options{{}, javaScript} {
			v, err := jsonorder.Decode(data, opts)
			if err != nil {
				if opts.Duplicate != nil && json.Valid(data) && bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) <= jsonorder.DefaultMaxDepth {
					t.Fatalf("rejected valid JSON %q: %v", data, err)
				}
				continue
			}
			if !json.Valid(data) {
				t.Fatalf("accepted invalid JSON %q", data)
			}
			indented := jsonorder.AppendIndent(nil, v)
			compact := jsonorder.AppendCompact(nil, v)
			if opts.Duplicate != nil && utf8.Valid(data) {
				// encoding/json reads as JSON.parse does, but for key order
				// and for numbers, which it makes float64s as JavaScript does.
				var want, got any
				if json.Unmarshal(data, &want) == nil {
					if err := json.Unmarshal(compact, &got); err != nil || !reflect.DeepEqual(got, want) {
						t.Fatalf("%q reads as %s, encoding/json reads %#v (%v)", data, compact, want, err)
					}
				}
			}
			for _, enc := range [][]byte{indented, compact} {
				again, err := jsonorder.Decode(enc, jsonorder.Options{})
				if err != nil {
					t.Fatalf("cannot decode own output %q of %q: %v", enc, data, err)
				}
				if got := jsonorder.AppendCompact(nil, again); !bytes.Equal(got, compact) {
					t.Fatalf("encoding not stable for %q:\n%s\n%s", data, compact, got)
				}
				if got := jsonorder.AppendIndent(nil, again); !bytes.Equal(got, indented) {
					t.Fatalf("indented encoding not stable for %q:\n%s\n%s", data, indented, got)
				}
			}
		}
	})
}
