// Package termtext measures, cuts and cleans text for a terminal, in
// columns rather than bytes or runes, so that a line of CJK text or emoji
// fits as well as one of ASCII, and no control character a file carries
// (an escape sequence in a task's subject) reaches the screen. taskd
// status and taskd ui draw with it.
package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clean makes s safe to print on a terminal: control characters (an escape
// sequence in a subject could recolour or clear the screen) become spaces,
// and so do line breaks.
func Clean(s string) string {
	ok := true
	for _, c := range s {
		if unicode.IsControl(c) || c == '\u2028' || c == '\u2029' {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	return strings.Map(func(c rune) rune {
		if unicode.IsControl(c) || c == '\u2028' || c == '\u2029' {
			return ' '
		}
		return c
	}, s)
}

// RuneWidth is the number of columns c takes: 0 for combining marks and
// other zero-width characters, 2 for East Asian wide and full-width
// characters and most emoji, 1 otherwise.
func RuneWidth(c rune) int {
	switch {
	case c == 0x200B || c == 0x200C || c == 0x200D || c == 0x2060 || c == 0xFEFF:
		return 0
	case unicode.In(c, unicode.Mn, unicode.Me):
		return 0
	case c >= 0x1100 && c <= 0x115F, // Hangul Jamo
		c >= 0x2E80 && c <= 0x303E, // CJK radicals, punctuation
		c >= 0x3041 && c <= 0x33FF, // kana, CJK symbols
		c >= 0x3400 && c <= 0x4DBF, // CJK extension A
		c >= 0x4E00 && c <= 0x9FFF, // CJK unified ideographs
		c >= 0xA000 && c <= 0xA4CF, // Yi
		c >= 0xAC00 && c <= 0xD7A3, // Hangul syllables
		c >= 0xF900 && c <= 0xFAFF, // CJK compatibility ideographs
		c >= 0xFE30 && c <= 0xFE4F, // CJK compatibility forms
		c >= 0xFF00 && c <= 0xFF60, // full-width forms
		c >= 0xFFE0 && c <= 0xFFE6,
		c >= 0x1F300 && c <= 0x1F64F, // emoji
		c >= 0x1F680 && c <= 0x1F6FF,
		c >= 0x1F900 && c <= 0x1F9FF,
		c >= 0x1FA70 && c <= 0x1FAFF,
		c >= 0x20000 && c <= 0x3FFFD: // CJK extensions
		return 2
	}
	return 1
}

// Width is the number of columns s takes (s has no control characters).
func Width(s string) int {
	n := 0
	for _, c := range s {
		n += RuneWidth(c)
	}
	return n
}

// FitWidth cuts s to at most n columns, marking a cut with "…".
func FitWidth(s string, n int) string {
	if Width(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	used := 0
	for _, c := range s {
		w := RuneWidth(c)
		if used+w > n-1 {
			break
		}
		b.WriteRune(c)
		used += w
	}
	return b.String() + "…"
}

// Pad fills s with spaces on the right to n columns.
func Pad(s string, n int) string {
	if w := Width(s); w < n {
		return s + strings.Repeat(" ", n-w)
	}
	return s
}

// PadLeft fills s with spaces on the left to n columns.
func PadLeft(s string, n int) string {
	if w := Width(s); w < n {
		return strings.Repeat(" ", n-w) + s
	}
	return s
}

// Wrap breaks s into lines of at most n columns, at spaces where it can
// (a word longer than a line, such as a path, is cut), and returns at most
// maxLines of them, the last marked with "…" when text was left out.
func Wrap(s string, n, maxLines int) []string {
	words := strings.Fields(s)
	var lines []string
	cur := ""
	flush := func() {
		lines = append(lines, cur)
		cur = ""
	}
	for len(words) > 0 {
		w := words[0]
		switch {
		case cur == "" && Width(w) > n: // cut a long word over lines
			head := strings.TrimSuffix(FitWidth(w, n), "…")
			if head == "" { // n is narrower than the first character
				_, size := utf8.DecodeRuneInString(w)
				head = w[:size]
			}
			cur = head
			words[0] = w[len(head):]
			flush()
			continue
		case cur == "":
			cur = w
		case Width(cur)+1+Width(w) <= n:
			cur += " " + w
		default:
			flush()
			continue
		}
		words = words[1:]
	}
	if cur != "" || len(lines) == 0 {
		flush()
	}
	if len(lines) > maxLines {
		lines = lines[:maxLines]
		lines[maxLines-1] = FitWidth(lines[maxLines-1]+"…", n)
	}
	return lines
}

// Fit makes s printable (see Clean) and cuts it to at most n columns.
func Fit(s string, n int) string {
	return FitWidth(Clean(s), n)
}

// FitLeft cuts s to at most n columns from the left, marking a cut with
// "…": for paths, whose end says most.
func FitLeft(s string, n int) string {
	if Width(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	r := []rune(s)
	used, i := 0, len(r)
	for i > 0 && used+RuneWidth(r[i-1]) <= n-1 {
		i--
		used += RuneWidth(r[i])
	}
	return "…" + string(r[i:])
}

// Home replaces the home directory home with ~ in the paths inside s
// that start with it: where a path begins (not inside another, such as
// /srv/x/root/… when the home is /root) and followed by / or the path's
// end.
func Home(s, home string) string {
	home = strings.TrimSuffix(home, "/")
	if home == "" || !strings.Contains(s, home) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, home)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(home)
		starts := i == 0 || !inPath(s[i-1])
		ends := end == len(s) || s[end] == '/' || !inPath(s[end])
		b.WriteString(s[:i])
		if starts && ends {
			b.WriteString("~")
		} else {
			b.WriteString(home)
		}
		s = s[end:]
	}
}

// inPath reports whether c may be part of a path's name (so that a home
// directory next to it is inside a longer path).
func inPath(c byte) bool {
	return c == '/' || c == '.' || c == '_' || c == '-' || c == '~' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
