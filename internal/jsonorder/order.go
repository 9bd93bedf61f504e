package jsonorder

import (
	"cmp"
	"slices"
	"strconv"
)

// object reads an object; depth counts it.
func (d *decoder) object(depth int) (any, error) {
	if depth > d.maxDepth {
		return nil, d.errorf("nested deeper than %d levels", d.maxDepth)
	}
	d.pos++ // '{'
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return NewObject(), nil
	}
	// The members of this object are d.keys[kb:] and d.vals[vb:].
	kb, vb, dupBase := len(d.keys), len(d.vals), len(d.dups)
	var index map[string]int // key → position, for objects with many keys
	for {
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, d.errorf("unexpected %s, expected a quoted key", d.describe())
		}
		keyPos := d.pos
		key, err := d.str()
		if err != nil {
			return nil, err
		}
		i := d.findKey(key, kb, index)
		if i >= 0 && d.opts.Duplicate == nil {
			d.pos = keyPos
			return nil, d.errorf("key %q appears twice in one object", key)
		}
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, d.errorf("unexpected %s, expected ':' after key %q", d.describe(), key)
		}
		d.pos++
		d.skipSpace()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		if i >= 0 {
			d.vals[vb+i] = v
			d.dups = append(d.dups, key)
		} else {
			d.keys = append(d.keys, key)
			d.vals = append(d.vals, v)
			if n := len(d.keys) - kb; index != nil {
				index[key] = n - 1
			} else if n > indexFrom {
				index = make(map[string]int, 2*n)
				for i, k := range d.keys[kb:] {
					index[k] = i
				}
			}
		}
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.errorf("unexpected end of file, expected ',' or '}'")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return d.endObject(kb, vb, dupBase, index), nil
		default:
			return nil, d.errorf("unexpected %s, expected ',' or '}'", d.describe())
		}
	}
}

// findKey returns the position of key among the keys of the object being
// read, which start at kb, or -1.
func (d *decoder) findKey(key string, kb int, index map[string]int) int {
	if index != nil {
		if i, ok := index[key]; ok {
			return i
		}
		return -1
	}
	for i, k := range d.keys[kb:] {
		if k == key {
			return i
		}
	}
	return -1
}

// endObject moves the keys from kb on and the values from vb on into a new
// Object and reports its repeated keys. index, if not nil, maps the keys to
// their positions.
func (d *decoder) endObject(kb, vb, dupBase int, index map[string]int) *Object {
	keys, vals := d.keys[kb:], d.vals[vb:]
	o := &Object{keys: slices.Clone(keys), vals: slices.Clone(vals), index: index}
	if d.opts.JavaScriptOrder && sortJavaScript(o.keys, o.vals) {
		o.reindex()
	}
	clear(vals)
	d.keys, d.vals = d.keys[:kb], d.vals[:vb]
	if len(d.dups) > dupBase {
		for _, k := range d.dups[dupBase:] {
			d.opts.Duplicate(o, k)
		}
		d.dups = d.dups[:dupBase]
	}
	return o
}

// sortJavaScript puts integer-like keys first, in numeric order, as
// JavaScript orders an object's keys; the others keep their order. vals
// moves with keys. It reports whether there was an integer-like key.
func sortJavaScript(keys []string, vals []any) bool {
	if !slices.ContainsFunc(keys, isArrayIndex) {
		return false
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		x, xIdx := arrayIndex(keys[a])
		y, yIdx := arrayIndex(keys[b])
		switch {
		case xIdx && yIdx:
			return cmp.Compare(x, y)
		case xIdx:
			return -1
		case yIdx:
			return 1
		}
		return 0
	})
	oldKeys, oldVals := slices.Clone(keys), slices.Clone(vals)
	for i, j := range order {
		keys[i], vals[i] = oldKeys[j], oldVals[j]
	}
	return true
}

func isArrayIndex(key string) bool {
	_, ok := arrayIndex(key)
	return ok
}

// arrayIndex reports whether key is what JavaScript calls an array index
// (a canonical decimal integer below 2³²−1), and its value.
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
