package daemon_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/agent/kindtest"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
)

// relayKind is a fifth kind of agent, added here as a program would add
// one: this file is all of it. Its agent is a program named relay that
// takes the task's model as --relay-model, a new session as
// --relay-session and one to continue as --relay-resume, keeps its
// sessions as files in $RELAY_STATE, and prints one JSON object a line
// (relay-lines): {"relay": "session" | "say" | "limit" | "done", …}.
type relayKind struct{}

func init() { agent.Register(relayKind{}) }

func (relayKind) Config() config.Kind {
	return config.Kind{Name: "relay", Programs: []string{"relay"}, Model: true}
}

func (relayKind) Formats() []agent.Format {
	return []agent.Format{{Name: "relay-lines", Line: parseRelayLine}}
}

// parseRelayLine reads one line of relay-lines.
func parseRelayLine(line []byte, s *agent.Stream) []string {
	var ev struct {
		Relay, ID, Text string
		Until           int64
	}
	if json.Unmarshal(line, &ev) != nil {
		return nil
	}
	switch ev.Relay {
	case "session":
		if ev.ID != "" {
			s.SessionID = ev.ID
		}
	case "say":
		s.Turns++
		s.Text = ev.Text
	case "limit":
		s.Limit = &agent.Limit{Message: "relay: limit", ResetsAt: time.Unix(ev.Until, 0)}
	case "done":
		s.Turns++
		s.Final = &agent.Final{Text: ev.Text}
	default:
		return nil
	}
	return []string{ev.Relay + " " + ev.Text}
}

func (relayKind) Args(argv []string, a *agent.Attempt) []string {
	if a.Spec.Model != "" {
		argv = append(argv, "--relay-model", a.Spec.Model)
	}
	if a.Resume != "" {
		return append(argv, "--relay-resume", a.Resume)
	}
	if a.Session != "" {
		argv = append(argv, "--relay-session", a.Session)
	}
	return argv
}

func (relayKind) BoundsTurns() bool { return false }

func (relayKind) Sessions() agent.Sessions { return relaySessions{} }

// Limit is the stream's limit, else a line "relay: limit until <unix
// time>" of the agent's plain output.
func (relayKind) Limit(st *agent.Stream, texts []string, now time.Time) *agent.Limit {
	if st != nil && st.Limit != nil {
		l := *st.Limit
		return &l
	}
	for _, text := range texts {
		for _, line := range strings.Split(text, "\n") {
			if at, ok := strings.CutPrefix(strings.TrimSpace(line), "relay: limit until "); ok {
				n, _ := strconv.ParseInt(at, 10, 64)
				return &agent.Limit{Message: "relay: limit", ResetsAt: time.Unix(n, 0)}
			}
		}
	}
	return nil
}

func (relayKind) CredentialsFix(docs string) string { return "relay needs none (" + docs + ")" }

type relaySessions struct{}

var relaySeq atomic.Int64

func (relaySessions) NewID() string { return fmt.Sprintf("relay-%d-%d", os.Getpid(), relaySeq.Add(1)) }

// Kept: the session's file is in the profile's $RELAY_STATE.
func (relaySessions) Kept(a *agent.Attempt, session string) bool {
	for _, e := range a.Profile.Env {
		if dir, ok := strings.CutPrefix(e, "RELAY_STATE="); ok {
			_, err := os.Stat(filepath.Join(dir, session))
			return err == nil
		}
	}
	return false
}

// TestKind_Fifth: a kind added by one file passes the conformance suite
// and runs a task through the daemon: the configuration takes it as a
// profile's kind by its program's name; its command line carries the
// task's model and a new session; its stream is the attempt's progress and
// transcript; its usage limit pauses the task; and once the limit lifts
// the task continues the same session, and succeeds with its report.
func TestKind_Fifth(t *testing.T) {
	t.Parallel()
	kindtest.Run(t, relayKind{}, kindtest.Sample{Session: "r-1", Summary: "relayed", Limit: "relay: limit until 1767369600",
		Outputs: map[string]string{"relay-lines": `{"relay":"session","id":"r-1"}
{"relay":"say","text":"working"}
{"relay":"done","text":"{\"success\": true, \"summary\": \"relayed\"}"}`}})

	bin, state := t.TempDir(), t.TempDir()
	relay := filepath.Join(bin, "relay")
	const script = `#!/bin/sh
model= session= resume=
while [ $# -gt 1 ]; do
	case "$1" in
	--relay-model) model=$2; shift 2 ;;
	--relay-session) session=$2; shift 2 ;;
	--relay-resume) resume=$2; shift 2 ;;
	*) break ;;
	esac
done
if [ -n "$resume" ]; then
	[ -f "$RELAY_STATE/$resume" ] || { echo "no session $resume" >&2; exit 3; }
	echo '{"relay":"session","id":"'"$resume"'"}'
	echo '{"relay":"say","text":"carrying on"}'
	echo '{"relay":"done","text":"{\"success\": true, \"summary\": \"resumed '"$resume"' with '"$model"'\"}"}'
	exit 0
fi
printf '%s' "$1" > "$RELAY_STATE/$session"
echo '{"relay":"session","id":"'"$session"'"}'
echo '{"relay":"say","text":"working on it"}'
echo '{"relay":"limit","until":'"$(( $(date +%s) + 2 ))"'}'
exit 1
`
	if err := os.WriteFile(relay, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"r": {Command: []string{relay}, Prompt: "arg", Output: "relay-lines", Env: []string{"RELAY_STATE=" + state}}}
	})
	if p := h.cfg.Profiles["r"]; p.Flags != "relay" || !p.PauseOnLimit {
		t.Fatalf("profile r has flags %q, pauses on a limit %v; want relay, true", p.Flags, p.PauseOnLimit)
	}
	h.drop("l", "1", `{"subject": "relayed", "owner": "taskd", "metadata": {"taskd": {"agent": "r", "model": "m-5", "prompt": "relay this"}}}`)
	h.waitState("l", "1", task.Paused, time.Minute)
	tf := h.waitState("l", "1", task.Succeeded, time.Minute)

	first := h.argvOf("l", "1", 1)
	i := slices.Index(first, "--relay-session")
	if i < 0 || i+1 >= len(first) || !slices.Contains(first, "m-5") {
		t.Fatalf("the first attempt's command line %q carries no new session or no model", first)
	}
	session := first[i+1]
	if data, err := os.ReadFile(filepath.Join(state, session)); err != nil || !strings.Contains(string(data), "relay this") {
		t.Errorf("the agent kept no session %s with its prompt: %q, %v", session, data, err)
	}
	if got := h.argvOf("l", "1", 2); !slices.Contains(got, "--relay-resume") || !slices.Contains(got, session) {
		t.Errorf("the attempt after the limit runs %q, which does not continue session %s", got, session)
	}
	got, _ := tf.Metadata.Object("taskd").Object("result").String("summary")
	if want := "resumed " + session + " with m-5"; got != want {
		t.Errorf("the task's result's summary is %q, want %q", got, want)
	}
	if tr := string(h.runFile("l", "1", 1, "transcript.log")); !strings.Contains(tr, "say working on it") {
		t.Errorf("the first attempt's transcript.log: %q", tr)
	}
	evs := h.waitEvents("l", eventlog.TaskSucceeded, "1", 1)
	if n := countEvents(evs, eventlog.TaskPaused, "1"); n != 1 {
		t.Errorf("the task paused %d times, want once", n)
	}
}
