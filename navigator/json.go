package navigator

import (
	"fmt"
	"sort"
	"strconv"
)

// Workflow files are decoded by a small JSON parser of their own, because
// flow depends on the order of object keys (JavaScript's order, not the
// file's) and encoding/json keeps no order. The parser reads a document in
// one pass into these values: nil, bool, string, number, []any and
// *object.

// number is a JSON number as written.
type number string

// object is a JSON object in JavaScript key order: a repeated key keeps its
// first position and its last value, and integer-like keys come first in
// numeric order.
type object struct {
	members []member
	dups    []string // keys that appeared more than once
}

// member is one key of an object and its value.
type member struct {
	key string
	val any
}

// maxNesting bounds the depth of workflow documents; real ones are four
// levels deep.
const maxNesting = 512

// decodeJSON parses data, which must hold exactly one JSON value.
func decodeJSON(data []byte) (any, error) {
	d := decoder{data: data}
	d.space()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.pos < len(d.data) {
		return nil, d.errorf("data after the JSON value")
	}
	return v, nil
}

type decoder struct {
	data []byte
	pos  int
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
	return fmt.Errorf("line %d, column %d: %s", line, col, fmt.Sprintf(format, args...))
}

func (d *decoder) unexpected(want string) error {
	if d.pos >= len(d.data) {
		return d.errorf("unexpected end of JSON input, expected %s", want)
	}
	return d.errorf("unexpected %q, expected %s", rune(d.data[d.pos]), want)
}

func (d *decoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) value(depth int) (any, error) {
	if depth > maxNesting {
		return nil, d.errorf("nested deeper than %d levels", maxNesting)
	}
	if d.pos >= len(d.data) {
		return nil, d.unexpected("a value")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
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
	}
	return nil, d.unexpected("a value")
}

func (d *decoder) literal(word string) error {
	if len(d.data)-d.pos >= len(word) && string(d.data[d.pos:d.pos+len(word)]) == word {
		d.pos += len(word)
		return nil
	}
	return d.unexpected(strconv.Quote(word))
}

func (d *decoder) object(depth int) (*object, error) {
	d.pos++ // {
	o := &object{}
	var index map[string]int // for large objects; small ones are searched
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return o, nil
	}
	for {
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, d.unexpected("a string key")
		}
		key, err := d.str()
		if err != nil {
			return nil, err
		}
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, d.unexpected("':'")
		}
		d.pos++
		d.space()
		val, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if i := o.find(key, index); i >= 0 {
			o.members[i].val = val
			o.dups = append(o.dups, key)
		} else {
			o.members = append(o.members, member{key, val})
			if index != nil {
				index[key] = len(o.members) - 1
			} else if len(o.members) > 16 {
				index = make(map[string]int, 2*len(o.members))
				for i, m := range o.members {
					index[m.key] = i
				}
			}
		}
		d.space()
		if d.pos < len(d.data) && d.data[d.pos] == ',' {
			d.pos++
			continue
		}
		if d.pos < len(d.data) && d.data[d.pos] == '}' {
			d.pos++
			break
		}
		return nil, d.unexpected("',' or '}'")
	}
	sortKeys(o.members)
	return o, nil
}

// find returns the position of key, or -1.
func (o *object) find(key string, index map[string]int) int {
	if index != nil {
		if i, ok := index[key]; ok {
			return i
		}
		return -1
	}
	for i := range o.members {
		if o.members[i].key == key {
			return i
		}
	}
	return -1
}

// sortKeys puts integer-like keys first, in numeric order, as JavaScript
// orders an object's keys.
func sortKeys(ms []member) {
	hasIndex := false
	for _, m := range ms {
		if _, ok := arrayIndex(m.key); ok {
			hasIndex = true
			break
		}
	}
	if !hasIndex {
		return
	}
	sort.SliceStable(ms, func(i, j int) bool {
		a, aIdx := arrayIndex(ms[i].key)
		b, bIdx := arrayIndex(ms[j].key)
		if aIdx && bIdx {
			return a < b
		}
		return aIdx && !bIdx
	})
}

// arrayIndex reports whether key is what JavaScript calls an array index
// (a canonical decimal integer below 2³²−1).
func arrayIndex(key string) (uint64, bool) {
	if key == "" || key[0] < '0' || key[0] > '9' || len(key) > 10 || (len(key) > 1 && key[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(key, 10, 32)
	if err != nil || n == 1<<32-1 {
		return 0, false
	}
	return n, true
}

func (d *decoder) array(depth int) ([]any, error) {
	d.pos++ // [
	arr := []any{}
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return arr, nil
	}
	for {
		d.space()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		d.space()
		if d.pos < len(d.data) && d.data[d.pos] == ',' {
			d.pos++
			continue
		}
		if d.pos < len(d.data) && d.data[d.pos] == ']' {
			d.pos++
			return arr, nil
		}
		return nil, d.unexpected("',' or ']'")
	}
}

func (d *decoder) number() (number, error) {
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
	switch {
	case d.pos < len(d.data) && d.data[d.pos] == '0':
		d.pos++
	case digits() == 0:
		return "", d.unexpected("a digit")
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if digits() == 0 {
			return "", d.unexpected("a digit")
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if digits() == 0 {
			return "", d.unexpected("a digit")
		}
	}
	return number(d.data[start:d.pos]), nil
}
