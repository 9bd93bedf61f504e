package prompt_test

import (
	"testing"

	"github.com/taskd/taskd/daemon/prompt"
)

func TestSubstituteTurns(t *testing.T) {
	render := func(s prompt.TurnSelection) string { return "<" + s.String() + ">" }
	tests := []struct{ in, want, err string }{
		{in: "no turns", want: "no turns"},
		{in: "last: $TURN[2].", want: "last: <$TURN[2]>."},
		{in: "$TURN[:1:3] and $TURN[*]", want: "<$TURN[:1:3]> and <$TURN[*]>"},
		{in: "$TURN[1]$TURN[1]", want: "<$TURN[1]><$TURN[1]>"},
		{in: "a\n$TURN[0]", err: `line 2: "$TURN[0]": $TURN selects earlier turns, counted from the newest: $TURN[3] (the last 3), $TURN[:1:3] (the newest and the third newest) or $TURN[*] (all)`},
		{in: "$TURN[:1:]", err: `line 1: "$TURN[:1:]": $TURN selects earlier turns, counted from the newest: $TURN[3] (the last 3), $TURN[:1:3] (the newest and the third newest) or $TURN[*] (all)`},
		{in: "$TURN[-1]", err: `line 1: "$TURN[-1]": $TURN selects earlier turns, counted from the newest: $TURN[3] (the last 3), $TURN[:1:3] (the newest and the third newest) or $TURN[*] (all)`},
		{in: "x $TURN[2\n]", err: `line 1: "$TURN[2\n]": $TURN[ is not closed with ] on its line; write $TURN[3], $TURN[:1:3] or $TURN[*]`},
	}
	for _, tt := range tests {
		got, err := prompt.SubstituteTurns(tt.in, render)
		switch {
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("SubstituteTurns(%q) error\n got %v\nwant %s", tt.in, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("SubstituteTurns(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
