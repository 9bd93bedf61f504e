package prompt

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/taskd/taskd/internal/jsonorder"
)

// The lexical pieces every syntax of the package shares: quoted strings,
// shell-like argument splitting, names and timeouts.

// namePattern is what a /push name, an as: name and a $RESULT[name] accept.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// idPattern is what a task id accepts (the file stem of a task file).
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// unquote reads the double-quoted string at the start of s (s[0] is '"'),
// decoding the escapes \n, \t, \" and \\. It returns the decoded value and
// what follows the closing quote. what names the string in errors.
func unquote(s, what string) (val, rest string, err error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			if i+1 == len(s) {
				return "", "", errorf("unclosed quote in %s: it ends with a lone \\", what)
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '"', '\\':
				b.WriteByte(s[i])
			default:
				return "", "", errorf(`unknown escape \%s in %s (known: \n, \t, \", \\)`, clipEscape(s[i:]), what)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errorf(`unclosed quote in %s: add the closing "`, what)
}

// clipEscape returns the character after a backslash, whole even when it
// is not ASCII.
func clipEscape(s string) string {
	for i := range s {
		if i > 0 {
			return s[:i]
		}
	}
	return s
}

// quote renders s as a double-quoted string that unquote reads back as s.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// word renders s bare when it is a single safe word and quoted otherwise.
func word(s string) string {
	if s == "" || s[0] == '-' || strings.ContainsAny(s, " \t\r\n\"'\\{}") {
		return quote(s)
	}
	return s
}

// checkUTF8 returns an *Error naming the line of the first byte of text
// that is not UTF-8, or nil. Lines are counted from 1 when lines is set. A
// lone surrogate, which a task file may hold (a JavaScript string can), is
// text, not an error.
func checkUTF8(text string, lines bool) *Error {
	if utf8.ValidString(text) {
		return nil
	}
	i := 0
	for i < len(text) {
		r, n := jsonorder.DecodeRune(text[i:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		i += n
	}
	if i == len(text) {
		return nil // only lone surrogates
	}
	e := errorf("invalid UTF-8 (byte 0x%02x); write the text as UTF-8", text[i])
	if lines {
		e.Line = strings.Count(text[:i], "\n") + 1
	}
	return e
}

// trimBlanks trims spaces and tabs (not other white space) from both ends.
func trimBlanks(s string) string { return strings.Trim(s, " \t") }

// isBlank reports whether a line holds nothing but white space.
func isBlank(line string) bool { return strings.TrimSpace(line) == "" }

// arg is one argument of a split line; quoted arguments are never flags.
type arg struct {
	s      string
	quoted bool
}

// splitArgs splits a line into arguments the way a shell would: blanks
// separate, "double quotes" group and decode \n \t \" \\, 'single quotes'
// group literally, and a backslash outside quotes takes the next character
// literally.
func splitArgs(line string) ([]arg, error) {
	var (
		out  []arg
		cur  strings.Builder
		in   bool // inside an argument
		quot bool // some part of it was quoted
	)
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case ' ', '\t':
			if in {
				out = append(out, arg{cur.String(), quot})
				cur.Reset()
				in, quot = false, false
			}
		case '"':
			val, rest, err := unquote(line[i:], "an argument")
			if err != nil {
				return nil, err
			}
			cur.WriteString(val)
			i = len(line) - len(rest) - 1
			in, quot = true, true
		case '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, errorf("unclosed ' in an argument: add the closing '")
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			in, quot = true, true
		case '\\':
			if i+1 == len(line) {
				return nil, errorf(`the line ends with a lone \`)
			}
			i++
			cur.WriteByte(line[i])
			in = true
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, arg{cur.String(), quot})
	}
	return out, nil
}

// secondsPattern is a plain number of seconds: digits, maybe a fraction.
var secondsPattern = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// parseTimeout reads a timeout written as a Go duration ("90s", "10m") or
// a number of seconds ("90", "1.5"). It must be positive. label names the
// option in errors ("timeout=", "--timeout").
func parseTimeout(s, label string) (time.Duration, error) {
	if secondsPattern.MatchString(s) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f*float64(time.Second) >= math.MaxInt64 {
			return 0, errorf("%s %q is too long", label, s)
		}
		d := time.Duration(f * float64(time.Second))
		if d <= 0 {
			return 0, errorf("%s %q must be more than 0", label, s)
		}
		return d, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errorf("%s %q is not a duration; write it like 90s or 10m, or as a number of seconds", label, s)
	}
	if d <= 0 {
		return 0, errorf("%s %q must be more than 0", label, s)
	}
	return d, nil
}
