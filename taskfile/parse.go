package taskfile

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds the nesting of arrays and objects in a task file. Claude
// Code's task files are a few levels deep; a file nested deeper than this is
// rejected instead of exhausting the stack.
const maxDepth = 256

// SyntaxError describes where a task file stops being valid JSON.
type SyntaxError struct {
	Line, Column int    // 1-based position of the problem
	Msg          string // what was wrong there
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// ParseValue parses one JSON value from data. Objects become *Object with
// their key order kept, numbers become json.Number with their literal text
// kept. The input must be valid UTF-8, objects may not repeat a key, and
// nesting is bounded; each violation is a *SyntaxError.
func ParseValue(data []byte) (any, error) {
	p := parser{data: data}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return nil, p.errorf("unexpected %s after the end of the JSON value", p.describe())
	}
	return v, nil
}

type parser struct {
	data []byte
	pos  int
}

func (p *parser) errorf(format string, args ...any) error {
	line, col := 1, 1
	for i := 0; i < p.pos && i < len(p.data); i++ {
		if p.data[i] == '\n' {
			line++
			col = 1
		} else if p.data[i] < 0x80 || p.data[i] >= 0xC0 {
			col++
		}
	}
	return &SyntaxError{Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) describe() string {
	if p.pos >= len(p.data) {
		return "end of file"
	}
	c := p.data[p.pos]
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of file, expected a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	default:
		return nil, p.errorf("unexpected %s, expected a value", p.describe())
	}
}

func (p *parser) literal(word string) error {
	if len(p.data)-p.pos >= len(word) && string(p.data[p.pos:p.pos+len(word)]) == word {
		p.pos += len(word)
		return nil
	}
	return p.errorf("invalid literal, expected %q", word)
}

func (p *parser) object(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errorf("nested deeper than %d levels", maxDepth)
	}
	p.pos++ // '{'
	obj := NewObject()
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return obj, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("unexpected %s, expected a quoted key", p.describe())
		}
		keyPos := p.pos
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if obj.Has(key) {
			p.pos = keyPos
			return nil, p.errorf("key %q appears twice in one object", key)
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("unexpected %s, expected ':' after key %q", p.describe(), key)
		}
		p.pos++
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		obj.keys = append(obj.keys, key)
		obj.vals[key] = v
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of file, expected ',' or '}'")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return obj, nil
		default:
			return nil, p.errorf("unexpected %s, expected ',' or '}'", p.describe())
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errorf("nested deeper than %d levels", maxDepth)
	}
	p.pos++ // '['
	arr := []any{}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return arr, nil
	}
	for {
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of file, expected ',' or ']'")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return arr, nil
		default:
			return nil, p.errorf("unexpected %s, expected ',' or ']'", p.describe())
		}
	}
}

func (p *parser) number() (any, error) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.errorf("invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.errorf("invalid number: no digits after '.'")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf("invalid number: no digits in exponent")
		}
	}
	return json.Number(p.data[start:p.pos]), nil
}

func (p *parser) str() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes.
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			s := p.data[start:p.pos]
			if !utf8.Valid(s) {
				return "", p.invalidUTF8(start)
			}
			p.pos++
			return string(s), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.errorf("control character 0x%02x in a string (write it as an escape such as \\n)", c)
		}
		p.pos++
	}
	if !utf8.Valid(p.data[start:p.pos]) {
		return "", p.invalidUTF8(start)
	}
	buf := append([]byte(nil), p.data[start:p.pos]...)
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c < 0x20:
			return "", p.errorf("control character 0x%02x in a string (write it as an escape such as \\n)", c)
		case c == '\\':
			p.pos++
			if p.pos >= len(p.data) {
				return "", p.errorf("unexpected end of file in a string escape")
			}
			e := p.data[p.pos]
			p.pos++
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) {
					// A pair is two escapes; a lone half has no UTF-8 form and
					// becomes U+FFFD, as JSON parsers conventionally do.
					if p.pos+6 <= len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
						save := p.pos
						p.pos += 2
						r2, err := p.hex4()
						if err == nil && utf16.DecodeRune(r, r2) != utf8.RuneError {
							r = utf16.DecodeRune(r, r2)
						} else {
							p.pos = save
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				buf = utf8.AppendRune(buf, r)
			default:
				p.pos--
				return "", p.errorf("invalid escape '\\%c' in a string", e)
			}
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.invalidUTF8(p.pos)
			}
			buf = append(buf, p.data[p.pos:p.pos+size]...)
			p.pos += size
		}
	}
	return "", p.errorf("unexpected end of file in a string")
}

func (p *parser) invalidUTF8(from int) error {
	for i := from; i < len(p.data); {
		r, size := utf8.DecodeRune(p.data[i:])
		if r == utf8.RuneError && size <= 1 {
			p.pos = i
			break
		}
		i += size
	}
	return p.errorf("invalid UTF-8 (byte 0x%02x); save the file as UTF-8", p.data[p.pos])
}

func (p *parser) hex4() (rune, error) {
	if p.pos+4 > len(p.data) {
		return 0, p.errorf("invalid \\u escape: need four hex digits")
	}
	var r rune
	for i, c := range p.data[p.pos : p.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			p.pos += i
			return 0, p.errorf("invalid \\u escape: %q is not a hex digit", rune(c))
		}
	}
	p.pos += 4
	return r, nil
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}
