package prompt

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Error reports something a user wrote that this package does not accept.
// Every function of the package that parses fails with an *Error.
type Error struct {
	Line int    // 1-based line in the prompt, text or command file; 0 when the input is not made of lines (an argument list, a block on its own)
	Text string // the line or argument as written, without trailing blanks; "" when there is nothing useful to quote
	Msg  string // what is wrong and, where it helps, how to write it instead
}

// Error formats the error as `line 3: "/pus x": unknown command /pus …`,
// leaving out the parts that are not known. Long lines are shortened in the
// message; Text keeps them whole.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Text != "" {
		fmt.Fprintf(&b, "%q: ", clip(e.Text, 80))
	}
	b.WriteString(e.Msg)
	return b.String()
}

// errorf returns an *Error with no position; callers that know the line
// add it with at.
func errorf(format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

// at places err, if it is an *Error without a line, at line n with text.
// Other errors and errors that already have a line are returned unchanged.
func at(err error, n int, text string) error {
	var pe *Error
	if err == nil || !errors.As(err, &pe) || pe.Line != 0 {
		return err
	}
	c := *pe
	c.Line = n
	if c.Text == "" {
		c.Text = text
	}
	return &c
}

// clip shortens s to at most n runes, marking the cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// suggest returns "; did you mean X?" when word is a likely misspelling
// of one of known (X being prefix, the match and suffix), and "" otherwise.
func suggest(word string, known []string, prefix, suffix string) string {
	if best := closest(word, known); best != "" {
		return "; did you mean " + prefix + best + suffix + "?"
	}
	return ""
}

// closest returns the entry of known within two edits of word, or "".
func closest(word string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if d := distance(strings.ToLower(word), k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best == word {
		return ""
	}
	return best
}

// distance is the Levenshtein distance between a and b, in bytes, capped
// for long inputs: words longer than 32 bytes are never suggestions.
func distance(a, b string) int {
	if len(a) > 32 || len(b) > 32 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
