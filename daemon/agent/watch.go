package agent

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// A Watcher follows a streaming agent's stdout.log as it grows, whoever
// writes it (the agent itself, or a runner that copies a remote agent's
// output into the run folder): it parses each line into the attempt's
// Stream, appends the readable form to transcript.log beside it, reports
// the progress, and says when the agent has passed its budget. It polls
// the file: an agent's lines come seconds apart, and a poll costs one
// stat-free read of nothing.
type Watcher struct {
	base, dir string
	parse     streamParser
	attempt   int
	report    Reporter
	onSession func(id string)
	budget    Budget
	// streamTurns: the budget's MaxTurns is enforced from the stream (an
	// agent without a flag of its own for it).
	streamTurns bool
	over        chan string
	stop        chan struct{}
	done        chan struct{}

	mu sync.Mutex
	st Stream
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

// pollInterval is how often a Watcher looks for new output.
const pollInterval = 200 * time.Millisecond

// maxLine bounds one line of a stream; a longer one is skipped.
const maxLine = 16 << 20

// Watch starts following the stdout.log of attempt a, whose output kind
// must be a stream (IsStream). onSession, if set, is called once with the
// session id as soon as the stream names it.
func Watch(a *Attempt, onSession func(id string)) *Watcher {
	w := &Watcher{
		base: a.ListDir, dir: a.Dir(), parse: parserFor(a.Profile.Output), attempt: a.N,
		report: a.Report, onSession: onSession, budget: a.Budget, streamTurns: a.Profile.Flags != "claude",
		over: make(chan string, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go w.run()
	return w
}

// OverBudget delivers, once, why the agent has passed its budget.
func (w *Watcher) OverBudget() <-chan string { return w.over }

// Finish reads what is left of the output (the agent has exited), stops
// following it and returns what the stream said.
func (w *Watcher) Finish() Stream {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st
}

func (w *Watcher) run() {
	defer close(w.done)
	tr, err := openRaw(w.base, filepath.Join(w.dir, "transcript.log"), syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC|syscall.O_APPEND)
	if err == nil {
		defer syscall.Close(tr)
	} else {
		tr = -1
	}
	src := -1
	defer func() {
		if src >= 0 {
			syscall.Close(src)
		}
	}()
	var off int64
	var pending []byte // a line not yet ended
	buf := make([]byte, 64<<10)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		stopping := false
		select {
		case <-w.stop:
			stopping = true
		default:
		}
		if src < 0 {
			src, _ = openRaw(w.base, filepath.Join(w.dir, "stdout.log"), syscall.O_RDONLY)
		}
		var lines [][]byte
		for src >= 0 {
			n, err := syscall.Pread(src, buf, off)
			if err == syscall.EINTR {
				continue
			}
			if n <= 0 {
				break
			}
			off += int64(n)
			pending = append(pending, buf[:n]...)
			for {
				i := bytes.IndexByte(pending, '\n')
				if i < 0 {
					break
				}
				lines = append(lines, pending[:i])
				pending = pending[i+1:]
			}
			if len(pending) > maxLine {
				pending = pending[:0] // skipped: no stream line is this long
			}
		}
		if stopping && len(pending) > 0 {
			lines, pending = append(lines, pending), nil
		}
		if len(lines) > 0 {
			w.take(lines, tr)
		}
		if stopping {
			return
		}
		select {
		case <-w.stop:
		case <-tick.C:
		}
	}
}

// take parses lines, writes their readable form, and reports.
func (w *Watcher) take(lines [][]byte, tr int) {
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
	w.mu.Unlock()
	if tr >= 0 && text.Len() > 0 {
		writeAll(tr, text.Bytes(), -1, "transcript.log")
	}
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

// usd renders an amount of US dollars to a hundredth of a cent, without
// trailing zeros.
func usd(v float64) string { return strconv.FormatFloat(roundCost(v), 'f', -1, 64) }
