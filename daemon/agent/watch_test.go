package agent

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
)

// progressLog is a Reporter that keeps what it is told.
type progressLog struct {
	mu   sync.Mutex
	seen []Progress
	got  chan struct{} // a value each report, without blocking
}

func (p *progressLog) Progress(pr Progress) {
	p.mu.Lock()
	p.seen = append(p.seen, pr)
	p.mu.Unlock()
	select {
	case p.got <- struct{}{}:
	default:
	}
}

// waitFor waits until a report satisfies cond.
func (p *progressLog) waitFor(t *testing.T, cond func(Progress) bool) Progress {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		p.mu.Lock()
		for _, pr := range p.seen {
			if cond(pr) {
				p.mu.Unlock()
				return pr
			}
		}
		p.mu.Unlock()
		select {
		case <-p.got:
		case <-deadline:
			t.Fatalf("no progress report matched; seen %+v", p.seen)
		}
	}
}

// streamAttempt is an attempt of a fake streaming agent: a shell script
// that prints the lines a stream would, with the profile spec given.
func streamAttempt(t *testing.T, spec config.ProfileSpec, script string) (*Local, *Attempt) {
	t.Helper()
	base := t.TempDir()
	spec.Command, spec.Prompt, spec.Flags = []string{"sh", "-c"}, "arg", "none"
	cfg, err := config.NewConfig(base, nil, &config.FileConfig{Grace: "1s", Profiles: map[string]config.ProfileSpec{"fake": spec}})
	if err != nil {
		t.Fatal(err)
	}
	prof, _ := cfg.ResolveAgent("fake", true)
	a := &Attempt{ListDir: base, ListID: "l", TaskID: "1", N: 1, Profile: prof, Cwd: t.TempDir(), Timeout: time.Minute, Prompt: script, Script: script}
	return NewLocal(cfg, slog.New(slog.DiscardHandler)), a
}

// fifo makes a named pipe the fake agent blocks on until the test writes
// to it.
func fifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "go-on")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

const (
	initLine   = `{"type":"system","subtype":"init","cwd":"/p","session_id":"s-1","model":"claude-sonnet-4-5"}`
	toolLine   = `{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"make test"}}],"usage":{"input_tokens":1000,"output_tokens":10}},"session_id":"s-1"}`
	resultLine = `{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"done {\"success\": true, \"summary\": \"tests pass\"}","session_id":"s-1","total_cost_usd":0.0123}`
)

// TestWatch_ProgressWhileRunning: a streaming agent's progress is
// reported, its transcript written and its session recorded in cmd.json
// while it still runs; its result comes from the stream's result line.
func TestWatch_ProgressWhileRunning(t *testing.T) {
	t.Parallel()
	goOn := fifo(t)
	script := "echo '" + initLine + "'; echo '" + toolLine + "'; read x < " + goOn + "; echo '" + resultLine + "'"
	r, a := streamAttempt(t, config.ProfileSpec{Output: OutputClaudeStream}, script)
	log := &progressLog{got: make(chan struct{}, 1)}
	a.Report = log
	type ran struct {
		res Result
		out Outcome
	}
	done := make(chan ran, 1)
	go func() { res, out := r.Run(t.Context(), a); done <- ran{res, out} }()

	p := log.waitFor(t, func(p Progress) bool { return p.Turns == 1 })
	if p.LastTool != "Bash make test" || p.SessionID != "s-1" || p.Tokens.Input != 1000 || !p.Estimated || p.CostUSD <= 0 || p.Attempt != 1 {
		t.Errorf("progress while running = %+v", p)
	}
	tr, _ := os.ReadFile(filepath.Join(a.Dir(), "transcript.log"))
	if !strings.Contains(string(tr), "tool: Bash make test") {
		t.Errorf("transcript.log while running:\n%s", tr)
	}
	var cmd struct {
		SessionID string `json:"sessionId"`
	}
	raw, _ := os.ReadFile(filepath.Join(a.Dir(), "cmd.json"))
	if json.Unmarshal(raw, &cmd); cmd.SessionID != "s-1" {
		t.Errorf("cmd.json while running has no session: %s", raw)
	}
	select {
	case <-done:
		t.Fatal("the agent ended before it was let go on")
	default:
	}
	if err := os.WriteFile(goOn, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.out != Finished || !got.res.Success || got.res.Summary != "tests pass" || got.res.SessionID != "s-1" || got.res.Turns != 2 {
		t.Errorf("Run = %v, %+v", got.out, got.res)
	}
	if got.res.CostUSD == nil || *got.res.CostUSD != 0.0123 || got.res.Progress == nil || got.res.Progress.CostUSD != 0.0123 || got.res.Progress.Estimated {
		t.Errorf("final cost %v, progress %+v; want the stream's own 0.0123", got.res.CostUSD, got.res.Progress)
	}
}

// TestWatch_OverBudget: an agent that passes its budget is stopped, and
// the attempt ends over budget with the reason.
func TestWatch_OverBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		output string
		budget Budget
		lines  []string
		want   string
	}{
		{"dollars", OutputClaudeStream, Budget{MaxCostUSD: 0.001}, []string{initLine, toolLine}, "over its budget of $0.001 (maxCostUsd)"},
		{"turns", OutputCodexJSON, Budget{MaxTurns: 1}, []string{`{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}`, `{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}`}, "taken 2 turns, over its budget of 1 (maxTurns)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			goOn := fifo(t) // never written: only a stop ends the agent
			script := ""
			for _, l := range tt.lines {
				script += "echo '" + l + "'; "
			}
			r, a := streamAttempt(t, config.ProfileSpec{Output: tt.output}, script+"read x < "+goOn)
			a.Budget = tt.budget
			res, out := r.Run(t.Context(), a)
			if out != OverBudget || res.Success || !strings.Contains(res.Error, tt.want) || res.Outcome != "over_budget" {
				t.Errorf("Run = %v, %+v; want over budget, %q", out, res, tt.want)
			}
		})
	}
}

// TestRun_UsageLimit: an agent of a profile that pauses on limits, which
// prints a usage limit and exits 1, ends paused with the reset it named;
// one whose profile fails on limits fails with the agent's words.
func TestRun_UsageLimit(t *testing.T) {
	t.Parallel()
	script := `echo "You've hit your limit · resets 8pm (Europe/Lisbon)"; exit 1`
	lisbon, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Skipf("no time zone data: %v", err)
	}
	// The reset is read against a clock of the test's: at 14:00 in
	// Lisbon, 8pm is 6 hours away, whenever the test runs. (Between 20:00
	// and 21:00 a reset "8pm" has just passed and names no time.)
	afternoon := time.Date(2026, time.March, 3, 14, 0, 0, 0, lisbon)
	for _, onLimit := range []string{"pause", "fail"} {
		r, a := streamAttempt(t, config.ProfileSpec{Output: "text", OnLimit: onLimit}, script)
		a.Clock = func() time.Time { return afternoon }
		res, out := r.Run(t.Context(), a)
		if onLimit == "fail" {
			if out != Finished || res.Limit != nil || res.Error != "the agent failed (exit status 1): You've hit your limit · resets 8pm (Europe/Lisbon)" {
				t.Errorf("onLimit fail: Run = %v, %+v", out, res)
			}
			continue
		}
		if out != Paused || res.Limit == nil || res.Limit.Profile != "fake" || res.Outcome != "paused" {
			t.Errorf("onLimit pause: Run = %v, %+v", out, res)
		} else if want := time.Date(2026, time.March, 3, 20, 0, 0, 0, lisbon); !res.Limit.ResetsAt.Equal(want) {
			t.Errorf("the limit resets at %v, want %v", res.Limit.ResetsAt, want)
		}
	}
}

// TestBudget_BeforeNextTurn: the budget's rule on a stream read line by
// line (claude's stream-json with --include-partial-messages): a turn that
// asks for a tool, after which the cost so far plus that turn's cost would
// pass the budget, stops the agent before the next turn; the same turn
// ending the run (no tool) does not, and neither does a budget with room
// for another such turn.
func TestBudget_BeforeNextTurn(t *testing.T) {
	turn := func(id, stop string, out int) []string {
		return []string{
			`{"type":"assistant","message":{"id":"` + id + `","model":"claude-sonnet-4","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":1000,"output_tokens":1}}}`,
			`{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"` + stop + `"},"usage":{"output_tokens":` + strconv.Itoa(out) + `}},"api_message_id":"` + id + `"}`,
		}
	}
	// sonnet: $3 in, $15 out per million: 1,000 in and 20,000 out is $0.303.
	tests := []struct {
		name   string
		lines  []string
		budget float64
		want   string // "" when the budget is not passed
	}{
		{"a tool call would lead to a turn over the budget", turn("m1", "tool_use", 20000), 0.5, "stopped before its next turn: it had spent about $0.303 of its budget of $0.5 (maxCostUsd), and its last turn cost about $0.303, more than the $0.197 left"},
		{"the last turn", turn("m1", "end_turn", 20000), 0.5, ""},
		{"room for another turn", turn("m1", "tool_use", 20000), 0.7, ""},
		{"past it already", append(turn("m1", "tool_use", 20000), turn("m2", "tool_use", 20000)...), 0.5, "stopped: it had spent about $0.606, over its budget of $0.5 (maxCostUsd)"},
		{"a new turn begins", append(turn("m1", "tool_use", 20000), `{"type":"stream_event","event":{"type":"message_start"}}`), 0.5, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st Stream
			for _, l := range tt.lines {
				parseClaudeLine([]byte(l), &st)
			}
			if got := (Budget{MaxCostUSD: tt.budget}).passed(&st, false); got != tt.want {
				t.Errorf("passed = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRun_OverBudgetOnLastLine: an agent whose last line (its result,
// with its total cost) passes its budget, and which then exits, ends over
// budget every time, whether the line ends with a newline or not. Before,
// a line without one was read only at the end and passed for a success,
// and with one the outcome was the race between the agent's exit and the
// reading of its line.
func TestRun_OverBudgetOnLastLine(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, script string }{
		{"newline", "echo '" + initLine + "'; echo '" + resultLine + "'"},
		{"no newline", "echo '" + initLine + "'; printf '%s' '" + resultLine + "'"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for range 5 {
				r, a := streamAttempt(t, config.ProfileSpec{Output: OutputClaudeStream}, tt.script)
				a.Budget = Budget{MaxCostUSD: 0.01} // the result says $0.0123
				res, out := r.Run(t.Context(), a)
				if out != OverBudget || res.Success || !strings.Contains(res.Error, "over its budget of $0.01 (maxCostUsd)") {
					t.Fatalf("Run = %v, %+v; want over budget", out, res)
				}
			}
		})
	}
}
