package jsonorder

import (
	"unicode/utf16"
	"unicode/utf8"
)

// A JavaScript string is a sequence of UTF-16 code units and may hold a
// surrogate that is not half of a pair. Go strings hold such a lone
// surrogate as the three bytes UTF-8 would give its code point (ED A0 80 to
// ED BF BF, which utf8 calls invalid), so that the user's text survives a
// read and a write; this is WTF-8.

// appendSurrogate appends the three-byte form of the surrogate r.
func appendSurrogate(buf []byte, r rune) []byte {
	return append(buf, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
}

// surrogateAt returns the surrogate whose three-byte form starts s, or 0.
func surrogateAt(s string) rune {
	if len(s) >= 3 && s[0] == 0xED && s[1] >= 0xA0 && s[1] <= 0xBF && s[2] >= 0x80 && s[2] <= 0xBF {
		return 0xD000 | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F)
	}
	return 0
}

// DecodeRune is utf8.DecodeRuneInString for the strings Decode returns: it
// also decodes the three-byte form of a lone surrogate, to the surrogate's
// code point with size 3. Other invalid bytes give (utf8.RuneError, 1).
func DecodeRune(s string) (r rune, size int) {
	r, size = utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size == 1 {
		if sr := surrogateAt(s); sr != 0 {
			return sr, 3
		}
	}
	return r, size
}

// invalidLen returns how many bytes at the start of b, which does not start
// with a valid UTF-8 sequence, JavaScript's UTF-8 decoder replaces with one
// U+FFFD: the longest start of a valid sequence, or one byte.
func invalidLen[T string | []byte](b T) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for n <= need && n < len(b) && b[n] >= lo && b[n] <= hi {
		n++
		lo, hi = 0x80, 0xBF
	}
	return n
}

// appendValidUTF8 appends b with each maximal invalid sequence replaced by
// U+FFFD, as JavaScript decodes UTF-8.
func appendValidUTF8(buf, b []byte) []byte {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			buf = utf8.AppendRune(buf, utf8.RuneError)
			i += invalidLen(b[i:])
			continue
		}
		buf = append(buf, b[i:i+size]...)
		i += size
	}
	return buf
}

const hexDigits = "0123456789abcdef"

// plain marks the bytes of valid UTF-8 that AppendString copies as they
// are: all but control characters, the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendString appends s quoted as JSON.stringify quotes a string: the
// quote, the backslash and control characters are escaped, a lone surrogate
// (see DecodeRune) is written as a lowercase \udXXX escape, two surrogates
// that form a pair as the character they form, and every other character
// as raw UTF-8. Any other byte that is not UTF-8, which Decode never
// returns, is written as U+FFFD, as JavaScript would have decoded it.
func AppendString(buf []byte, s string) []byte {
	if !utf8.ValidString(s) {
		return appendWTF8String(buf, s)
	}
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; !plain[c] {
			buf = appendEscape(append(buf, s[start:i]...), c)
			start = i + 1
		}
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// appendWTF8String is AppendString for strings that are not valid UTF-8.
func appendWTF8String(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !plain[c] {
				buf = appendEscape(append(buf, s[start:i]...), c)
				start = i + 1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || size != 1 {
			i += size
			continue
		}
		buf = append(buf, s[start:i]...)
		if hi := surrogateAt(s[i:]); hi == 0 {
			buf = utf8.AppendRune(buf, utf8.RuneError)
			i += invalidLen(s[i:])
		} else if lo := surrogateAt(s[i+3:]); hi < 0xDC00 && lo >= 0xDC00 {
			buf = utf8.AppendRune(buf, utf16.DecodeRune(hi, lo))
			i += 6
		} else {
			buf = append(buf, '\\', 'u', 'd', hexDigits[hi>>8&0xF], hexDigits[hi>>4&0xF], hexDigits[hi&0xF])
			i += 3
		}
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// appendEscape appends the escape of the ASCII byte c.
func appendEscape(buf []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(buf, '\\', c)
	case '\b':
		return append(buf, '\\', 'b')
	case '\f':
		return append(buf, '\\', 'f')
	case '\n':
		return append(buf, '\\', 'n')
	case '\r':
		return append(buf, '\\', 'r')
	case '\t':
		return append(buf, '\\', 't')
	}
	return append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}
