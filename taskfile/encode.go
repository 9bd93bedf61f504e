package taskfile

import (
	"encoding/json"
	"unicode/utf8"
)

// AppendJSON appends the JSON form of v to buf, laid out exactly as
// JavaScript's JSON.stringify(v, null, 2) lays it out: two-space indentation,
// empty arrays and objects as [] and {}, no HTML escaping, non-ASCII text
// (U+2028 and U+2029 included) written as raw UTF-8, and no trailing
// newline. Matching Claude Code's own writer byte for byte means a task file
// that taskd reads and writes back unchanged is not rewritten at all.
//
// v must hold only the value types of Object (see Object).
func AppendJSON(buf []byte, v any) []byte {
	return appendValue(buf, v, 0)
}

// MarshalIndent returns AppendJSON(nil, v).
func MarshalIndent(v any) []byte {
	return AppendJSON(nil, v)
}

func appendIndent(buf []byte, depth int) []byte {
	buf = append(buf, '\n')
	for i := 0; i < depth; i++ {
		buf = append(buf, ' ', ' ')
	}
	return buf
}

func appendValue(buf []byte, v any, depth int) []byte {
	switch v := v.(type) {
	case nil:
		return append(buf, "null"...)
	case bool:
		if v {
			return append(buf, "true"...)
		}
		return append(buf, "false"...)
	case string:
		return appendString(buf, v)
	case json.Number:
		return append(buf, v...)
	case *Object:
		if v.Len() == 0 {
			return append(buf, "{}"...)
		}
		buf = append(buf, '{')
		for i, k := range v.keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendIndent(buf, depth+1)
			buf = appendString(buf, k)
			buf = append(buf, ':', ' ')
			buf = appendValue(buf, v.vals[k], depth+1)
		}
		buf = appendIndent(buf, depth)
		return append(buf, '}')
	case []any:
		if len(v) == 0 {
			return append(buf, "[]"...)
		}
		buf = append(buf, '[')
		for i, e := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendIndent(buf, depth+1)
			buf = appendValue(buf, e, depth+1)
		}
		buf = appendIndent(buf, depth)
		return append(buf, ']')
	default:
		return appendValue(buf, normalize(v), depth)
	}
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as JSON.stringify does: only the quote, the
// backslash and control characters are escaped.
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			if c < utf8.RuneSelf {
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				// Invalid UTF-8 cannot come from the parser; a caller's string
				// gets the replacement character rather than a broken file.
				buf = append(buf, s[start:i]...)
				buf = append(buf, "\ufffd"...)
				i += size
				start = i
				continue
			}
			i += size
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"':
			buf = append(buf, '\\', '"')
		case '\\':
			buf = append(buf, '\\', '\\')
		case '\b':
			buf = append(buf, '\\', 'b')
		case '\f':
			buf = append(buf, '\\', 'f')
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
