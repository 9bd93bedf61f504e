package taskfile

import "github.com/taskd/taskd/internal/jsonorder"

// Object is a JSON object that remembers the order of its keys. Task files
// are read into Objects so that a read-modify-write keeps every key taskd does
// not understand, in the place the writer put it; keys added later are
// appended.
//
// Values held by an Object are always one of: nil (JSON null), bool, string,
// json.Number, []any and *Object. Set converts the other Go types it accepts
// (integers, floats, []string, map[string]any built by callers) into these.
// A string holds a lone surrogate of the file (an escape such as \ud800) as
// its three-byte form; see jsonorder.DecodeRune.
//
// An Object is not safe for concurrent use.
type Object = jsonorder.Object

// NewObject returns an empty object.
func NewObject() *Object { return jsonorder.NewObject() }

// SyntaxError describes where a task file stops being valid JSON.
type SyntaxError = jsonorder.SyntaxError

// maxDepth bounds the nesting of arrays and objects in a task file. Claude
// Code's task files are a few levels deep; a file nested deeper than this is
// rejected instead of exhausting the stack.
const maxDepth = 256

// fileJSON is how task files are read: keys in the file's order, numbers as
// written, and a repeated key or bytes that are not UTF-8 rejected.
var fileJSON = jsonorder.Options{MaxDepth: maxDepth}

// ParseValue parses one JSON value from data. Objects become *Object with
// their key order kept, numbers become json.Number with their literal text
// kept. The input must be valid UTF-8, objects may not repeat a key, and
// nesting is bounded; each violation is a *SyntaxError.
func ParseValue(data []byte) (any, error) {
	return jsonorder.Decode(data, fileJSON)
}

// AppendJSON appends the JSON form of v to buf, laid out exactly as
// JavaScript's JSON.stringify(v, null, 2) lays it out: two-space indentation,
// empty arrays and objects as [] and {}, no HTML escaping, non-ASCII text
// (U+2028 and U+2029 included) written as raw UTF-8, a lone surrogate as a
// \udXXX escape, and no trailing newline. Numbers keep their text. Matching
// Claude Code's own writer byte for byte means a task file that taskd reads
// and writes back unchanged is not rewritten at all.
//
// v must hold only the value types of Object (see Object).
func AppendJSON(buf []byte, v any) []byte {
	return jsonorder.AppendIndent(buf, v)
}

// MarshalIndent returns AppendJSON(nil, v).
func MarshalIndent(v any) []byte {
	return AppendJSON(nil, v)
}

// TypeName names the JSON type of a value of an Object ("null", "a
// boolean", "a string", "a number", "an array", "an object") for error
// messages.
func TypeName(v any) string { return jsonorder.TypeName(v) }
