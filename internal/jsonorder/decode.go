// Package jsonorder decodes JSON into values that keep the order of object
// keys, and encodes them byte for byte as JavaScript's JSON.stringify does.
// It is the one JSON codec of taskd's task files and workflows, which are
// written and read by JavaScript programs (Claude Code and the flow plugin)
// as well as by taskd.
//
// Values are nil (null), bool, string, json.Number, []any and *Object.
//
// Decoding (Decode) reads one RFC 8259 JSON text in one pass. Options
// choose between a file's own rules and JSON.parse's:
//
//   - Key order: as written in the file, or JavaScript's (integer-like keys
//     first in numeric order, then the others as written).
//   - Repeated keys: an error, or JSON.parse's rule (the key keeps its first
//     position and takes its last value), reported to a callback.
//   - Invalid UTF-8: an error, or each maximal invalid sequence replaced by
//     U+FFFD, as JavaScript's UTF-8 decoding replaces it.
//   - Numbers: kept as written, or rewritten as JavaScript prints the
//     double JSON.parse makes of them (a literal beyond the range of a
//     double stays as written).
//   - Nesting: bounded by MaxDepth arrays and objects.
//
// Strings keep the user's text exactly. A \u escape of a surrogate pair
// decodes to its code point. A lone surrogate, which a JavaScript string
// can hold but UTF-8 cannot, decodes to its three-byte generalized UTF-8
// form (WTF-8: ED A0 80 for U+D800); DecodeRune reads such strings one
// code point at a time.
//
// Encoding (AppendIndent, AppendCompact, AppendString) writes what
// JSON.stringify writes for the same JavaScript value: only the quote, the
// backslash and control characters are escaped (\b \f \n \r \t, the others
// as \u00XX), a lone surrogate is written as a lowercase \udXXX escape
// (two side by side that form a pair as the character they form), and
// everything else as raw UTF-8. Keys are written in their Object's order and
// numbers as their json.Number text. So decoding a document written by
// JSON.stringify and encoding it again gives the same bytes.
package jsonorder

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// DefaultMaxDepth is the nesting limit when Options.MaxDepth is 0.
const DefaultMaxDepth = 256

// Options says how Decode reads a document. The zero Options reads a file
// strictly: keys in file order, repeated keys and invalid UTF-8 rejected,
// numbers kept as written, at most DefaultMaxDepth levels.
type Options struct {
	// JavaScriptOrder orders each object's keys as a JavaScript object
	// does: integer-like keys (canonical decimal integers below 2³²−1)
	// first in numeric order, then the others in the order written.
	JavaScriptOrder bool

	// Duplicate, when set, lets a key repeat in one object as JSON.parse
	// does (the key keeps its first position and takes its last value) and
	// is called once per repeat with the finished object and the key. When
	// nil, a repeated key is a *SyntaxError.
	Duplicate func(o *Object, key string)

	// ReplaceInvalidUTF8 replaces bytes that are not UTF-8 with U+FFFD
	// instead of rejecting the document.
	ReplaceInvalidUTF8 bool

	// JavaScriptNumbers rewrites each number as FormatNumber prints the
	// double it denotes: 1.0 becomes 1, -0 becomes 0, 1E+2 becomes 100.
	JavaScriptNumbers bool

	// MaxDepth bounds the nesting of arrays and objects; 0 means
	// DefaultMaxDepth.
	MaxDepth int
}

// SyntaxError describes where a document stops being valid JSON.
type SyntaxError struct {
	Line, Column int    // 1-based position of the problem, in characters
	Msg          string // what was wrong there
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Decode parses data, which must hold exactly one JSON value. Errors are
// *SyntaxError.
func Decode(data []byte, opts Options) (any, error) {
	d := decoder{data: data, opts: opts, maxDepth: opts.MaxDepth, keys: make([]string, 0, 16), vals: make([]any, 0, 16)}
	if d.maxDepth == 0 {
		d.maxDepth = DefaultMaxDepth
	}
	d.skipSpace()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos < len(d.data) {
		return nil, d.errorf("unexpected %s after the end of the JSON value", d.describe())
	}
	return v, nil
}

type decoder struct {
	data     []byte
	pos      int
	opts     Options
	maxDepth int

	// Members of the arrays and objects being read, innermost last; each
	// is copied out into a slice of its own size when it ends.
	keys []string
	vals []any
	dups []string // repeated keys of the objects being read
}

func (d *decoder) errorf(format string, args ...any) error {
	line, col := 1, 1
	for _, c := range d.data[:min(d.pos, len(d.data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else if c < 0x80 || c >= 0xC0 {
			col++
		}
	}
	return &SyntaxError{Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// describe names the byte at the current position for an error.
func (d *decoder) describe() string {
	if d.pos >= len(d.data) {
		return "end of file"
	}
	c := d.data[d.pos]
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// value reads the value at the current position; depth is the number of
// arrays and objects around it.
func (d *decoder) value(depth int) (any, error) {
	if d.pos >= len(d.data) {
		return nil, d.errorf("unexpected end of file, expected a value")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		return d.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	default:
		return nil, d.errorf("unexpected %s, expected a value", d.describe())
	}
}

func (d *decoder) literal(word string) error {
	if len(d.data)-d.pos >= len(word) && string(d.data[d.pos:d.pos+len(word)]) == word {
		d.pos += len(word)
		return nil
	}
	return d.errorf("invalid literal, expected %q", word)
}

func (d *decoder) array(depth int) (any, error) {
	if depth > d.maxDepth {
		return nil, d.errorf("nested deeper than %d levels", d.maxDepth)
	}
	d.pos++ // '['
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return []any{}, nil
	}
	base := len(d.vals)
	for {
		d.skipSpace()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		d.vals = append(d.vals, v)
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.errorf("unexpected end of file, expected ',' or ']'")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			arr := make([]any, len(d.vals)-base)
			copy(arr, d.vals[base:])
			clear(d.vals[base:])
			d.vals = d.vals[:base]
			return arr, nil
		default:
			return nil, d.errorf("unexpected %s, expected ',' or ']'", d.describe())
		}
	}
}

func (d *decoder) number() (any, error) {
	start := d.pos
	if d.data[d.pos] == '-' {
		d.pos++
	}
	digits := func() int {
		n := 0
		for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
			d.pos++
			n++
		}
		return n
	}
	if d.pos < len(d.data) && d.data[d.pos] == '0' {
		d.pos++
	} else if digits() == 0 {
		return nil, d.errorf("invalid number")
	}
	integer := d.pos - start
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if digits() == 0 {
			return nil, d.errorf("invalid number: no digits after '.'")
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if digits() == 0 {
			return nil, d.errorf("invalid number: no digits in exponent")
		}
	}
	lit := d.data[start:d.pos]
	if d.opts.JavaScriptNumbers && (len(lit) != integer || len(lit) > 15 || string(lit) == "-0") {
		// Short integers are already in JavaScript's form.
		if f, err := strconv.ParseFloat(string(lit), 64); err == nil {
			return json.Number(FormatNumber(f)), nil
		}
	}
	return json.Number(lit), nil
}
