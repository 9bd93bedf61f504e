package jsonorder

import (
	"unicode/utf16"
	"unicode/utf8"
)

// str reads a string at the current position, which holds its opening
// quote. The string is read as runs of bytes that stand for themselves,
// each checked for UTF-8 at once, between escapes.
func (d *decoder) str() (string, error) {
	d.pos++        // opening quote
	var buf []byte // nil until the string differs from its bytes
	for {
		start := d.pos
		for d.pos < len(d.data) && plain[d.data[d.pos]] {
			d.pos++
		}
		run := d.data[start:d.pos]
		valid := utf8.Valid(run)
		switch {
		case !valid && !d.opts.ReplaceInvalidUTF8:
			return "", d.invalidUTF8(start)
		case !valid:
			buf = appendValidUTF8(buf, run)
		case buf != nil || d.pos >= len(d.data) || d.data[d.pos] != '"':
			buf = append(buf, run...)
		}
		if d.pos >= len(d.data) {
			return "", d.errorf("unexpected end of file in a string")
		}
		switch c := d.data[d.pos]; c {
		case '"':
			d.pos++
			if buf == nil {
				return string(run), nil
			}
			return string(buf), nil
		case '\\':
			var err error
			if buf, err = d.escape(buf); err != nil {
				return "", err
			}
		default:
			return "", d.errorf("control character 0x%02x in a string (write it as an escape such as \\n)", c)
		}
	}
}

// escape decodes the escape at the current position onto buf.
func (d *decoder) escape(buf []byte) ([]byte, error) {
	d.pos++ // '\'
	if d.pos >= len(d.data) {
		return nil, d.errorf("unexpected end of file in a string escape")
	}
	e := d.data[d.pos]
	d.pos++
	switch e {
	case '"', '\\', '/':
		return append(buf, e), nil
	case 'b':
		return append(buf, '\b'), nil
	case 'f':
		return append(buf, '\f'), nil
	case 'n':
		return append(buf, '\n'), nil
	case 'r':
		return append(buf, '\r'), nil
	case 't':
		return append(buf, '\t'), nil
	case 'u':
		r, err := d.hex4()
		if err != nil {
			return nil, err
		}
		if utf16.IsSurrogate(r) {
			// A pair is two escapes, high then low. A lone half is kept as
			// the code unit it is (see appendSurrogate).
			if r < 0xDC00 && d.pos+6 <= len(d.data) && d.data[d.pos] == '\\' && d.data[d.pos+1] == 'u' {
				if r2, ok := hexValue(d.data[d.pos+2 : d.pos+6]); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
					d.pos += 6
					return utf8.AppendRune(buf, utf16.DecodeRune(r, r2)), nil
				}
			}
			return appendSurrogate(buf, r), nil
		}
		return utf8.AppendRune(buf, r), nil
	default:
		d.pos--
		return nil, d.errorf("invalid escape '\\%c' in a string", e)
	}
}

func (d *decoder) hex4() (rune, error) {
	if d.pos+4 > len(d.data) {
		return 0, d.errorf("invalid \\u escape: need four hex digits")
	}
	for i, c := range d.data[d.pos : d.pos+4] {
		if _, ok := hexDigit(c); !ok {
			d.pos += i
			return 0, d.errorf("invalid \\u escape: %q is not a hex digit", rune(c))
		}
	}
	r, _ := hexValue(d.data[d.pos : d.pos+4])
	d.pos += 4
	return r, nil
}

// hexValue decodes four hex digits.
func hexValue(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		v, ok := hexDigit(c)
		if !ok {
			return 0, false
		}
		r = r<<4 | v
	}
	return r, true
}

func hexDigit(c byte) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0'), true
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10), true
	case c >= 'A' && c <= 'F':
		return rune(c - 'A' + 10), true
	}
	return 0, false
}

// invalidUTF8 reports the first byte from the position from on that is not
// UTF-8.
func (d *decoder) invalidUTF8(from int) error {
	d.pos = from
	for d.pos < len(d.data) {
		r, size := utf8.DecodeRune(d.data[d.pos:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		d.pos += size
	}
	return d.errorf("invalid UTF-8 (byte 0x%02x); save the file as UTF-8", d.data[d.pos])
}
