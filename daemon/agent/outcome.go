package agent

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/taskd/taskd/internal/fsroot"
)

// StreamResult is the Result of an attempt whose agent streamed st and
// exited with exitCode: its final text (claude's result field, else its
// last text) with the report in it, as ParseResult reads one; its
// session, turns and cost. A stream that ends in an error, or lists
// denied tool calls, is no success, whatever the report says; the error
// is the agent's own words.
func StreamResult(st *Stream, exitCode int) Result {
	r := Result{ExitCode: exitCode, Success: exitCode == 0, SessionID: st.SessionID, Turns: st.Turns}
	if st.CostKnown {
		c := roundCost(st.CostUSD)
		r.CostUSD = &c
	}
	text := st.Text
	if f := st.Final; f != nil && (f.Text != "" || f.IsError) {
		text = f.Text
	}
	r.Output = strings.TrimSpace(text)
	readReport(&r, text)
	if f := st.Final; f != nil && f.IsError {
		r.Success = false
		r.Error = agentError(st)
		if r.Summary == "" {
			r.Summary = r.Error
		}
	}
	if len(st.Denials) > 0 {
		r.Denials = st.Denials
		r.Success = false
		if r.Error == "" {
			r.Error = DeniedText(st.Denials)
		}
	}
	return r
}

// agentError is what a stream that ended in an error says of it, on one
// line: the final text, else its last error, else the kind of error.
func agentError(st *Stream) string {
	if f := st.Final; f != nil && strings.TrimSpace(f.Text) != "" {
		return oneLine(f.Text, 300)
	}
	if n := len(st.Errors); n > 0 {
		return oneLine(st.Errors[n-1], 300)
	}
	if f := st.Final; f != nil && f.Subtype != "" {
		return "the agent reported an error (" + f.Subtype + ")"
	}
	return "the agent reported an error"
}

// DeniedText says which tool calls an agent was refused.
func DeniedText(ds []Denial) string {
	parts := make([]string, 0, len(ds))
	for i, d := range ds {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(ds)-i))
			break
		}
		if d.Target != "" {
			parts = append(parts, d.Tool+" ("+d.Target+")")
		} else {
			parts = append(parts, d.Tool)
		}
	}
	return "the agent was refused " + strings.Join(parts, ", ")
}

// endedLogs are the logs of an attempt whose agent has ended, in the run
// folder dir of the list directory base, and the bytes each received.
type endedLogs struct {
	base, dir string
	folder    *fsroot.Dir // the run folder open, if it was
	received  map[string]int64
}

// tail returns at most the last n bytes of the log name. A log that
// received nothing is empty without being opened.
func (l endedLogs) tail(name string, n int64) []byte {
	if got, ok := l.received[name]; ok && got == 0 {
		return nil
	}
	if l.folder != nil {
		data, _ := readTailIn(l.folder, name, n)
		return data
	}
	data, _ := ReadTail(l.base, filepath.Join(l.dir, name), n)
	return data
}

// ending turns what attempt a's agent left in the run folder dir into its
// Result, and says how an attempt that finished ended: passed its budget
// (over, when the watcher stopped it; or claude's own turn limit), met a
// usage limit (paused, if its profile pauses), or failed, with the
// agent's own last words as the error.
func (a *Attempt) ending(logs endedLogs, w *Watcher, exitCode int, out Outcome, over string) (Result, Outcome) {
	stdout := logs.tail("stdout.log", MaxScan)
	var res Result
	var st *Stream
	if w != nil {
		s := w.Finish()
		st = &s
		if out == Finished {
			// Its last lines, read as it exited or after (one without a
			// newline), may have passed the budget: the outcome does not
			// depend on which came first.
			if why := w.budget.spent(st, w.streamTurns); why != "" {
				out, over = OverBudget, why
			}
		}
		res = StreamResult(st, exitCode)
		p := st.Progress(a.N, time.Now())
		res.Progress = &p
	} else {
		res = ParseResult(a.Profile.Output, stdout, exitCode)
	}
	if out == OverBudget {
		res.Success, res.Error, res.Summary = false, over, over
		return res, out
	}
	stderr := logs.tail("stderr.log", 16<<10)
	said := plainLines(string(tail(stdout, 16<<10)), st != nil)
	if out == TimedOut {
		res.Error = fmt.Sprintf("timed out after %s", a.Timeout)
		if why := lastTrouble(st, string(stderr), said); why != "" {
			res.Error += "; " + why
		}
		res.Summary = res.Error
		return res, out
	}
	if out != Finished || res.Success {
		return res, out
	}
	if st != nil && st.Final != nil && st.Final.OutOfTurns {
		msg := fmt.Sprintf("stopped: it reached its budget of %d turns (maxTurns)", a.Budget.MaxTurns)
		res.Error, res.Summary = msg, msg
		return res, OverBudget
	}
	if a.Profile.PauseOnLimit && len(res.Denials) == 0 {
		now := time.Now
		if a.Clock != nil {
			now = a.Clock
		}
		if lim := a.findLimitOf(st, []string{said, string(stderr)}, now()); lim != nil {
			lim.Profile = a.Profile.Name
			res.Limit = lim
			res.Error = "usage limit: " + lim.Message
			res.Summary = res.Error
			return res, Paused
		}
	}
	if res.Error == "" && exitCode == 0 && res.Summary != "" {
		// It exited as a program that did its job, and said in its
		// report that it did not: its reason is the error.
		res.Error = "the agent reported failure: " + oneLine(res.Summary, 300)
	}
	if res.Error == "" {
		// The agent's own last words: stderr's last line, else its
		// plain stdout's.
		res.Error = fmt.Sprintf("the agent failed (exit status %d)", exitCode)
		for _, text := range []string{string(stderr), said} {
			if last := lastLines(text, 1); len(last) > 0 {
				res.Error += ": " + oneLine(last[0], 200)
				break
			}
		}
	}
	return res, out
}

// lastTrouble says what an agent that was stopped at its timeout last
// reported going wrong, in its own words: its stream's last error since
// its model last answered (Claude Code retrying an API call that failed),
// else the last line it wrote to standard error, else that it was
// waiting for its model's answer, else the last plain line of its output,
// else, for a stream that never began, that it had written nothing.
func lastTrouble(st *Stream, stderr, said string) string {
	if st != nil && st.Trouble != "" {
		return "the agent's last error: " + st.Trouble
	}
	if last := lastLines(stderr, 1); len(last) > 0 {
		return "the agent's last error: " + oneLine(last[0], 200)
	}
	if st != nil && st.Asking {
		return "the agent was waiting for its model's answer: the API did not answer (a slow or unreachable API, or a network, proxy or ANTHROPIC_BASE_URL problem)"
	}
	if last := lastLines(said, 1); len(last) > 0 {
		return "its last output: " + oneLine(last[0], 200)
	}
	if st != nil && st.SessionID == "" {
		return "the agent had written nothing: it had not started up"
	}
	return ""
}

// plainLines is an agent's stdout without the JSON lines of its stream
// (a streaming agent may print plain text too, such as a usage limit's
// message); all of it when it does not stream.
func plainLines(stdout string, streamed bool) string {
	if !streamed {
		return stdout
	}
	var b strings.Builder
	for _, l := range strings.Split(stdout, "\n") {
		if t := strings.TrimSpace(l); t != "" && t[0] != '{' {
			b.WriteString(t)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
