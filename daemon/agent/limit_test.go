package agent

import (
	"testing"
	"time"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("time zone %s: %v", name, err)
	}
	return loc
}

// TestParseReset: the reset times usage-limit messages name, relative to
// a clock at 15:00 in Lisbon on 14 March 2026.
func TestParseReset(t *testing.T) {
	lisbon := mustZone(t, "Europe/Lisbon")
	ny := mustZone(t, "America/New_York")
	now := time.Date(2026, 3, 14, 15, 0, 0, 0, lisbon)
	tests := []struct {
		msg  string
		want time.Time
	}{
		{"You've hit your limit · resets 8pm (Europe/Lisbon)", time.Date(2026, 3, 14, 20, 0, 0, 0, lisbon)},
		{"You've hit your limit · resets 8:30 pm (Europe/Lisbon)", time.Date(2026, 3, 14, 20, 30, 0, 0, lisbon)},
		{"You've hit your session limit · resets 3am (America/New_York)", time.Date(2026, 3, 15, 3, 0, 0, 0, ny)},
		{"Weekly limit reached · resets Mar 16 at 10am (Europe/Lisbon)", time.Date(2026, 3, 16, 10, 0, 0, 0, lisbon)},
		{"5-hour limit reached ∙ resets 20:00", time.Date(2026, 3, 14, 20, 0, 0, 0, lisbon)},
		{"You've hit your limit · resets 9am", time.Date(2026, 3, 15, 9, 0, 0, 0, lisbon)},
		{"Claude AI usage limit reached|1773522000", time.Unix(1773522000, 0)},
		{"You've hit your usage limit. Try again in 2 hours 5 minutes.", now.Add(2*time.Hour + 5*time.Minute)},
		{"rate limited; try again in 90s", now.Add(90 * time.Second)},
		{"You've hit your limit · resets 2:30pm (Europe/Lisbon)", time.Time{}}, // passed half an hour ago: lifting now
		{"API Error: Request rejected (429) · Rate limit reached", time.Time{}},
		{"resets in 30 days", time.Time{}}, // beyond eight days
		{"resets 42", time.Time{}},
	}
	for _, tt := range tests {
		if got := parseReset(tt.msg, now); !got.Equal(tt.want) {
			t.Errorf("parseReset(%q) = %v, want %v", tt.msg, got, tt.want)
		}
	}
}

// TestFindLimit: which outputs of a failed attempt are usage limits.
func TestFindLimit(t *testing.T) {
	now := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	overloaded := &Stream{Final: &Final{IsError: true, APIStatus: 529, Text: "API Error: Repeated 529 Overloaded errors"}}
	event := &Stream{Limit: &Limit{Message: "usage limit (five hour)", ResetsAt: now.Add(time.Hour)}, Errors: []string{"You've hit your limit · resets 4pm (UTC)"}}
	tests := []struct {
		name    string
		st      *Stream
		texts   []string
		want    string
		resetIn time.Duration
	}{
		{"subscription text on stdout", nil, []string{"You've hit your limit · resets 8pm (UTC)\n"}, "You've hit your limit · resets 8pm (UTC)", 5 * time.Hour},
		{"overloaded", overloaded, nil, "API Error: Repeated 529 Overloaded errors", 0},
		{"a rate_limit_event with the agent's words", event, nil, "You've hit your limit · resets 4pm (UTC)", time.Hour},
		{"HTTP 429 on stderr", nil, []string{"", "error: status 429 Too Many Requests"}, "error: status 429 Too Many Requests", 0},
		{"an ordinary failure", nil, []string{"--- FAIL: TestLogin (0.00s)\nFAIL\n", "exit status 1"}, "", 0},
		{"a number that is not a status", nil, []string{"fixed 429 tests"}, "", 0},
	}
	for _, tt := range tests {
		lim := FindLimit(tt.st, tt.texts, now)
		switch {
		case tt.want == "" && lim != nil:
			t.Errorf("%s: found %+v, want none", tt.name, lim)
		case tt.want == "":
		case lim == nil:
			t.Errorf("%s: found none, want %q", tt.name, tt.want)
		case lim.Message != tt.want:
			t.Errorf("%s: message %q, want %q", tt.name, lim.Message, tt.want)
		case tt.resetIn == 0 && !lim.ResetsAt.IsZero(), tt.resetIn != 0 && !lim.ResetsAt.Equal(now.Add(tt.resetIn)):
			t.Errorf("%s: resets at %v, want in %v", tt.name, lim.ResetsAt, tt.resetIn)
		}
	}
}
