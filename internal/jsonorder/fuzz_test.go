package jsonorder_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/taskd/taskd/internal/jsonorder"
)

// FuzzRoundTrip decodes arbitrary input with a file's options and with
// JSON.parse's and checks, for whatever decodes: the input was valid JSON;
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
