package prompt

import (
	"strconv"
	"strings"
)

// turnRef is the start of a reference to earlier turns: $TURN[…].
const turnRef = "$TURN["

// A TurnSelection is what a $TURN[…] reference picks from the turns of a
// conversation, counted from the newest (1):
//
//	$TURN[3]       the last 3 turns (Last: 3)
//	$TURN[:1:3]    the newest and the third newest (Pick: [1 3])
//	$TURN[*]       every turn (All)
type TurnSelection struct {
	Last int
	Pick []int
	All  bool
}

// String renders the selection as written: "$TURN[3]", "$TURN[:1:3]", "$TURN[*]".
func (s TurnSelection) String() string {
	switch {
	case s.All:
		return turnRef + "*]"
	case len(s.Pick) > 0:
		var b strings.Builder
		for _, n := range s.Pick {
			b.WriteString(":" + strconv.Itoa(n))
		}
		return turnRef + b.String() + "]"
	}
	return turnRef + strconv.Itoa(s.Last) + "]"
}

// HasTurns reports whether text refers to earlier turns.
func HasTurns(text string) bool { return strings.Contains(text, turnRef) }

// SubstituteTurns replaces every $TURN[…] in text with what render gives
// for its selection; the replacement is not scanned again. A reference
// that is not closed by ] on its line, or selects nothing a number can
// (a count or index that is not a whole number ≥ 1), is an *Error naming
// its line.
func SubstituteTurns(text string, render func(TurnSelection) string) (string, error) {
	var b strings.Builder
	line := 1
	last := 0
	for off := 0; ; {
		i := strings.Index(text[off:], turnRef)
		if i < 0 {
			break
		}
		start := off + i
		line += strings.Count(text[off:start], "\n")
		rest := text[start+len(turnRef):]
		j := strings.IndexByte(rest, ']')
		if nl := strings.IndexByte(rest, '\n'); j < 0 || nl >= 0 && nl < j {
			return "", &Error{Line: line, Text: clip(text[start:], 40), Msg: "$TURN[ is not closed with ] on its line; write $TURN[3], $TURN[:1:3] or $TURN[*]"}
		}
		sel, ok := parseTurns(rest[:j])
		if !ok {
			return "", &Error{Line: line, Text: turnRef + rest[:j] + "]",
				Msg: "$TURN selects earlier turns, counted from the newest: $TURN[3] (the last 3), $TURN[:1:3] (the newest and the third newest) or $TURN[*] (all)"}
		}
		b.WriteString(text[last:start])
		b.WriteString(render(sel))
		off = start + len(turnRef) + j + 1
		last = off
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

// parseTurns reads what is between $TURN[ and ].
func parseTurns(s string) (TurnSelection, bool) {
	whole := func(s string) (int, bool) {
		n, err := strconv.Atoi(s)
		return n, err == nil && n >= 1 && strings.Trim(s, "0123456789") == ""
	}
	switch {
	case s == "*":
		return TurnSelection{All: true}, true
	case strings.HasPrefix(s, ":"):
		var sel TurnSelection
		for _, part := range strings.Split(s[1:], ":") {
			n, ok := whole(part)
			if !ok {
				return TurnSelection{}, false
			}
			sel.Pick = append(sel.Pick, n)
		}
		return sel, true
	}
	n, ok := whole(s)
	return TurnSelection{Last: n}, ok
}
