package agent

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// A Watcher reads a streaming agent's output as it comes (it is handed
// every byte the agent writes to stdout, also what the cap of stdout.log
// cuts): it parses each line into the attempt's Stream, appends the
// readable form to transcript.log beside stdout.log (capped as the other
// logs), reports the progress, and says when the agent has passed its
// budget.
type Watcher struct {
	parse     StreamParser
	attempt   int
	report    Reporter
	onSession func(id string)
	budget    Budget
	// streamTurns: the budget's MaxTurns is enforced from the stream (an
	// agent without a flag of its own for it).
	streamTurns bool
	over        chan string

	mu         sync.Mutex
	st         Stream
	pending    []byte // a line not yet ended
	transcript *cappedLog
	cut        int64 // bytes cut from transcript.log, once finished
	finished   bool
}

// A Reporter is told an attempt's progress as its stream shows it, after
// every batch of lines that changed it. It must not block for long;
// rate-limiting the writes is its business.
type Reporter interface {
	Progress(p Progress)
}

// A Budget bounds what an attempt may spend: turns (model calls) and
// US dollars. Zero means no bound.
type Budget struct {
	MaxTurns   int
	MaxCostUSD float64
}

// maxLine bounds one line of a stream; a longer one is skipped.
const maxLine = 16 << 20

// Watch starts reading the stdout of attempt a, whose output kind must be
// a stream (IsStream), as it is handed to Write; its transcript.log keeps
// at most limit bytes. onSession, if set, is called once with the
// session id as soon as the stream names it.
func Watch(a *Attempt, limit int64, onSession func(id string)) *Watcher {
	w := &Watcher{
		parse: parserFor(a.Profile.Output), attempt: a.N,
		report: a.Report, onSession: onSession, budget: a.Budget, streamTurns: !a.boundsTurns(),
		over: make(chan string, 1),
	}
	w.transcript = createCappedLog(a.ListDir, filepath.Join(a.Dir(), "transcript.log"), limit)
	return w
}

// OverBudget delivers, once, why the agent has passed its budget.
func (w *Watcher) OverBudget() <-chan string { return w.over }

// Write takes what the agent wrote next; the lines it ends are read.
func (w *Watcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.finished {
		w.mu.Unlock()
		return len(p), nil
	}
	w.pending = append(w.pending, p...)
	var lines [][]byte
	for {
		i := bytes.IndexByte(w.pending, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, w.pending[:i:i])
		w.pending = w.pending[i+1:]
	}
	if len(w.pending) > maxLine {
		w.pending = nil // skipped: no stream line is this long
	}
	w.mu.Unlock()
	if len(lines) > 0 {
		w.take(lines)
	}
	return len(p), nil
}

// Finish reads what is left of the output (the agent has exited and all
// it wrote was handed to Write), closes the transcript and returns what
// the stream said.
func (w *Watcher) Finish() Stream {
	w.mu.Lock()
	last := w.pending
	w.pending = nil
	w.mu.Unlock()
	if len(last) > 0 {
		w.take([][]byte{last})
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.finished && w.transcript != nil {
		w.cut, _ = w.transcript.Close()
	}
	w.finished = true
	return w.st
}

// TranscriptCut is how many bytes were cut from transcript.log, once
// finished.
func (w *Watcher) TranscriptCut() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cut
}

// take parses lines, writes their readable form, and reports.
func (w *Watcher) take(lines [][]byte) {
	var text bytes.Buffer
	now := time.Now()
	w.mu.Lock()
	hadSession := w.st.SessionID != ""
	for _, line := range lines {
		for _, l := range w.parse(line, &w.st) {
			text.WriteString(now.Format("15:04:05 "))
			text.WriteString(l)
			text.WriteByte('\n')
		}
	}
	st := w.st
	if w.transcript != nil && text.Len() > 0 {
		w.transcript.Write(text.Bytes())
	}
	w.mu.Unlock()
	if !hadSession && st.SessionID != "" && w.onSession != nil {
		w.onSession(st.SessionID)
	}
	if w.report != nil {
		w.report.Progress(st.Progress(w.attempt, now))
	}
	if why := w.budget.passed(&st, w.streamTurns); why != "" {
		select {
		case w.over <- why:
		default:
		}
	}
}

// passed says how st has passed budget b, or "" if it has not. Turns
// count only when streamTurns is set (claude enforces its own).
//
// A cost budget is also passed before the agent makes a model call that
// would pass it: when its last call asked for a tool (another call
// follows once the tool has run) and what it has spent plus what that
// last call cost is over the budget, the next call is taken to cost at
// least as much, and the agent is stopped now (docs/agents.md, Budgets).
func (b Budget) passed(st *Stream, streamTurns bool) string {
	how := "about "
	if st.CostKnown {
		how = ""
	}
	if b.MaxCostUSD > 0 && st.CostUSD > b.MaxCostUSD {
		return fmt.Sprintf("stopped: it had spent %s$%s, over its budget of $%s (maxCostUsd)", how, usd(st.CostUSD), usd(b.MaxCostUSD))
	}
	if b.MaxCostUSD > 0 && st.MoreTurns && st.LastTurnUSD > 0 && st.CostUSD+st.LastTurnUSD > b.MaxCostUSD {
		return fmt.Sprintf("stopped before its next turn: it had spent %s$%s of its budget of $%s (maxCostUsd), and its last turn cost about $%s, more than the $%s left",
			how, usd(st.CostUSD), usd(b.MaxCostUSD), usd(st.LastTurnUSD), usd(b.MaxCostUSD-st.CostUSD))
	}
	if streamTurns && b.MaxTurns > 0 && st.Turns > b.MaxTurns {
		return fmt.Sprintf("stopped: it had taken %d turns, over its budget of %d (maxTurns)", st.Turns, b.MaxTurns)
	}
	return ""
}

// spent says how an agent that ended by itself had passed budget b, by
// what its whole stream st says ("" if it had not).
func (b Budget) spent(st *Stream, streamTurns bool) string {
	how := "about "
	if st.CostKnown {
		how = ""
	}
	if b.MaxCostUSD > 0 && st.CostUSD > b.MaxCostUSD {
		return fmt.Sprintf("it ended having spent %s$%s, over its budget of $%s (maxCostUsd)", how, usd(st.CostUSD), usd(b.MaxCostUSD))
	}
	if streamTurns && b.MaxTurns > 0 && st.Turns > b.MaxTurns {
		return fmt.Sprintf("it ended having taken %d turns, over its budget of %d (maxTurns)", st.Turns, b.MaxTurns)
	}
	return ""
}

// usd renders an amount of US dollars to a hundredth of a cent, without
// trailing zeros.
func usd(v float64) string { return strconv.FormatFloat(roundCost(v), 'f', -1, 64) }
