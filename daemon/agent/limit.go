package agent

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// An agent that meets a usage limit (a spent plan, an API rate limit, an
// overloaded API) has not failed: its task pauses until the limit resets
// (docs/agents.md). The forms recognised:
//
//   - claude's text "You've hit your limit · resets 8pm (Europe/Lisbon)",
//     and "Claude AI usage limit reached|<unix time>";
//   - a stream's rate_limit_event whose status is "rejected", with
//     resetsAt;
//   - a result with is_error and api_error_status 429 or 529 ("API
//     Error: Rate limit reached", "Overloaded");
//   - in any agent's last lines: "rate limit", "usage limit", "limit
//     reached", "too many requests", "overloaded", or HTTP 429/529 named
//     as an error.
//
// The reset time is taken from the message when it names one: a time of
// day ("8pm", "20:00", "8:30 pm"), with a date ("Oct 9 at 10am") or
// not, in the time zone named in parentheses (else the local one); a
// relative time ("in 2 hours 5 minutes"); or a Unix time.

// A Limit is a usage limit an agent met.
type Limit struct {
	Message  string    `json:"message"`           // what the agent said, on one line
	ResetsAt time.Time `json:"resetsAt,omitzero"` // when it said the limit resets (zero: it did not say)
	Profile  string    `json:"profile,omitempty"` // the agent profile that met it
	// Until is when the profile's agents run again: ResetsAt, or a
	// backoff when the agent named no reset time. The job sets it.
	Until time.Time `json:"until,omitzero"`
	// SessionID is the agent's session to resume when the task runs
	// again, if it had one.
	SessionID string `json:"sessionId,omitempty"`
}

func (l *Limit) describe() string {
	if l.ResetsAt.IsZero() {
		return l.Message
	}
	return l.Message + " (resets " + l.ResetsAt.Local().Format("Jan 2 15:04 MST") + ")"
}

// limitLine matches a line that reports a usage limit.
var limitLine = regexp.MustCompile(`(?i)rate.?limit|usage limit|hit your (?:[\w'-]+ )*limit|limit reached|too many requests|overloaded|` +
	`\b(?:429|529)\b.*(?:error|rejected|status|too many)|(?:error|status|http)\D{0,20}\b(?:429|529)\b`)

// FindLimit returns the usage limit an attempt's output reports, or nil:
// the stream's own report (st may be nil), its API error, or a line of
// its texts (the stream's errors, the end of stdout and of stderr) that
// reads as one. It is how every built-in kind recognises usage limits
// (Kind.Limit).
func FindLimit(st *Stream, texts []string, now time.Time) *Limit {
	var lim *Limit
	if st != nil && st.Limit != nil {
		l := *st.Limit
		lim = &l
	}
	var lines []string
	if st != nil {
		lines = append(lines, st.Errors...)
		if f := st.Final; f != nil && f.IsError {
			lines = append(lines, f.Text)
			if lim == nil && (f.APIStatus == 429 || f.APIStatus == 529) {
				lim = &Limit{Message: oneLine(firstNonEmptyString(f.Text, "API error "+strconv.Itoa(f.APIStatus)), 300)}
			}
		}
	}
	for _, t := range texts {
		lines = append(lines, lastLines(t, 20)...)
	}
	for _, line := range lines {
		if !limitLine.MatchString(line) {
			continue
		}
		if lim == nil {
			lim = &Limit{Message: oneLine(line, 300)}
		} else if strings.HasPrefix(lim.Message, "usage limit (") {
			lim.Message = oneLine(line, 300) // the agent's own words are better
		}
		if lim.ResetsAt.IsZero() {
			lim.ResetsAt = parseReset(line, now)
		}
	}
	return lim
}

// lastLines returns the last n non-empty lines of text.
func lastLines(text string, n int) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

var (
	unixReset     = regexp.MustCompile(`limit reached\|(\d{9,11})\b`)
	resetPhrase   = regexp.MustCompile(`(?i)(?:resets?|try again|available again)(?: at| on)?\s+(.*)`)
	zoneName      = regexp.MustCompile(`\(([A-Za-z_]+(?:/[A-Za-z0-9_+\-]+)*|UTC)\)`)
	relativeReset = regexp.MustCompile(`(?i)^in\s+((?:\d+\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)[\s,and]*)+)`)
	relativePart  = regexp.MustCompile(`(?i)(\d+)\s*(d|h|m|s)`)
	dateReset     = regexp.MustCompile(`(?i)^(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?(?:\s+at)?\s+`)
	clockReset    = regexp.MustCompile(`(?i)^(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\b`)
)

// parseReset finds when a limit message says the limit resets, or the
// zero time. A time of day means its next occurrence; one that passed
// within the hour (a message printed just as the limit lifts) counts as
// unnamed, and so does one more than eight days away.
func parseReset(msg string, now time.Time) time.Time {
	if m := unixReset.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return sane(time.Unix(n, 0), now)
	}
	m := resetPhrase.FindStringSubmatch(msg)
	if m == nil {
		return time.Time{}
	}
	when := strings.TrimSpace(m[1])
	loc := now.Location()
	if z := zoneName.FindStringSubmatch(when); z != nil {
		if l, err := time.LoadLocation(z[1]); err == nil {
			loc = l
		}
	}
	if r := relativeReset.FindStringSubmatch(when); r != nil {
		var d time.Duration
		for _, p := range relativePart.FindAllStringSubmatch(r[1], -1) {
			n, _ := strconv.Atoi(p[1])
			d += time.Duration(n) * map[string]time.Duration{"d": 24 * time.Hour, "h": time.Hour, "m": time.Minute, "s": time.Second}[strings.ToLower(p[2])]
		}
		return sane(now.Add(d), now)
	}
	local := now.In(loc)
	year, month, day := local.Date()
	dated := false
	if d := dateReset.FindStringSubmatch(when); d != nil {
		month = monthOf(d[1])
		day, _ = strconv.Atoi(d[2])
		when, dated = when[len(d[0]):], true
	}
	c := clockReset.FindStringSubmatch(when)
	if c == nil || c[2] == "" && c[3] == "" {
		return time.Time{} // a bare number is no time
	}
	hour, _ := strconv.Atoi(c[1])
	minute, _ := strconv.Atoi(c[2])
	switch strings.ToLower(c[3]) {
	case "am":
		if hour == 12 {
			hour = 0
		}
	case "pm":
		if hour < 12 {
			hour += 12
		}
	}
	if hour > 23 || minute > 59 {
		return time.Time{}
	}
	at := time.Date(year, month, day, hour, minute, 0, 0, loc)
	switch {
	case dated && at.Before(now.Add(-24*time.Hour)):
		at = at.AddDate(1, 0, 0) // a date early next year
	case !dated && !at.After(now):
		if now.Sub(at) < time.Hour {
			return time.Time{} // it is lifting now
		}
		at = at.AddDate(0, 0, 1)
	}
	return sane(at, now)
}

// sane returns at if it lies in the next eight days, else the zero time.
func sane(at, now time.Time) time.Time {
	if !at.After(now) || at.Sub(now) > 8*24*time.Hour {
		return time.Time{}
	}
	return at
}

func monthOf(abbr string) time.Month {
	i := strings.Index("janfebmaraprmayjunjulaugsepoctnovdec", strings.ToLower(abbr[:3]))
	return time.Month(i/3 + 1)
}

func firstNonEmptyString(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
