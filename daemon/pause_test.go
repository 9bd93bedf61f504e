package daemon_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
	"github.com/taskd/taskd/taskfile"
)

// pauseOf reads metadata.taskd.pause of t.
func pauseOf(t *taskfile.Task) agent.Limit {
	var lim agent.Limit
	v, _ := t.Metadata.Object("taskd").Get("pause")
	json.Unmarshal(taskfile.AppendJSON(nil, v), &lim)
	return lim
}

// eventsFor returns the events of typ for task id.
func eventsFor(evs []eventlog.Event, typ, id string) []eventlog.Event {
	var out []eventlog.Event
	for _, e := range evs {
		if e.Type == typ && e.Task == id {
			out = append(out, e)
		}
	}
	return out
}

// TestClaude_RateLimitPausesAndResumes: the real Claude Code CLI meets an
// HTTP 429 the API says not to retry, and exits with an is_error result
// whose subtype says success. The task is paused (no failure counted, no
// retry spent), and when the pause ends (a short backoff: the agent named
// no reset time) the same session is resumed with --resume and told to go
// on; the stub sees the first prompt again in the resumed request, and the
// task completes with one session.
func TestClaude_RateLimitPausesAndResumes(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	stub := claudestub.New(t, func(n int, body string) claudestub.Turn {
		if n == 1 {
			return claudestub.Turn{Status: 429}
		}
		return claudestub.Turn{Text: `Carried on. {"success": true, "summary": "finished after the limit"}`}
	})
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = streamingClaude(t, bin, stub, config.ProfileSpec{LimitBackoff: "1s"})
	})
	h.drop("l", "1", `{"subject": "limited", "owner": "taskd", "metadata": {"taskd": {"agent": "claude", "cwd": "`+t.TempDir()+`", "prompt": "Count the files of the flaky login test."}}}`)

	tf := h.waitState("l", "1", task.Succeeded, 2*time.Minute)
	evs := h.waitEvents("l", eventlog.TaskSucceeded, "1", 1)
	paused := eventsFor(evs, eventlog.TaskPaused, "1")
	if len(paused) != 1 {
		t.Fatalf("%d TaskPaused events, want 1", len(paused))
	}
	session, _ := paused[0].Data["sessionId"].(string)
	if msg, _ := paused[0].Data["message"].(string); session == "" || !strings.Contains(msg, "Request rejected (429)") || paused[0].Data["profile"] != "claude" {
		t.Errorf("TaskPaused data %v", paused[0].Data)
	}
	argv := h.argvOf("l", "1", 2)
	if i := slices.Index(argv, "--resume"); i < 0 || i+1 >= len(argv) || argv[i+1] != session {
		t.Errorf("the second attempt's argv %q does not resume session %s", argv, session)
	}
	var res agent.Result
	json.Unmarshal(h.runFile("l", "1", 2, "result.json"), &res)
	if res.SessionID != session || res.Summary != "finished after the limit" {
		t.Errorf("the resumed attempt's result: session %q (want %q), summary %q", res.SessionID, session, res.Summary)
	}
	bodies := stub.Bodies()
	if len(bodies) != 2 || !strings.Contains(bodies[1], "Count the files of the flaky login test.") || !strings.Contains(bodies[1], "usage limit that stopped you has reset") {
		t.Errorf("the resumed request does not carry the session and the go-on prompt (%d requests):\n%.500s", len(bodies), bodies[len(bodies)-1])
	}
	m := tf.Metadata.Object("taskd")
	for _, k := range []string{"failures", "pause", "pauses", "error"} {
		if _, ok := m.Get(k); ok {
			t.Errorf("metadata.taskd.%s is still there after the success", k)
		}
	}
	var first agent.Result
	json.Unmarshal(h.runFile("l", "1", 1, "result.json"), &first)
	if first.Outcome != "paused" || first.Limit == nil {
		t.Errorf("the first attempt's result.json: outcome %q limit %+v", first.Outcome, first.Limit)
	}
}

// TestPause_UsageLimitForms: the subscription forms of a usage limit,
// which the stub cannot make the real CLI print, printed by a fake agent
// (an exec-style profile that pauses on limits): a stream with a
// rate_limit_event whose resetsAt is ten seconds away (a reset a loaded
// machine does not pass before the daemon reads it) and the text "You've
// hit your limit · resets 8pm (Europe/Lisbon)" pauses until the event's
// reset and then runs again; the text alone, exit status 1 and nothing on
// stderr, pauses the task until the time it names in Lisbon, which taskd
// status shows,
// and holds back every other task of the profile while tasks of other
// profiles run.
func TestPause_UsageLimitForms(t *testing.T) {
	t.Parallel()
	lisbon, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Skipf("time zone data: %v", err)
	}
	fake := config.ProfileSpec{Command: []string{"sh", "-c"}, Prompt: "arg", Flags: "none", OnLimit: "pause"}
	streaming := fake
	streaming.Output = "claude-stream"
	h := startDaemonWithCLI(t, []string{"l", "m"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"streaming": streaming, "plan": fake}
		fc.Lists = map[string]config.ListConfig{"m": {Concurrency: 1}}
	})
	marker := filepath.Join(t.TempDir(), "limited-once")
	script := `if [ ! -e ` + marker + ` ]; then touch ` + marker + `
echo '{"type":"system","subtype":"init","session_id":"s-1","model":"m"}'
echo '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":'$(( $(date +%s) + 10 ))',"rateLimitType":"five_hour"},"session_id":"s-1"}'
echo "You've hit your limit · resets 8pm (Europe/Lisbon)"
exit 1
fi
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s-2","num_turns":1,"total_cost_usd":0.01}'`
	h.drop("l", "1", execTask("stream form", script, "taskd.agent", `"streaming"`))

	h.waitState("l", "1", task.Paused, time.Minute)
	tf := h.read("l", "1")
	lim := pauseOf(tf)
	if lim.Message != "You've hit your limit · resets 8pm (Europe/Lisbon)" || lim.ResetsAt.IsZero() || time.Until(lim.ResetsAt) > 11*time.Second || !lim.Until.Equal(lim.ResetsAt) {
		t.Errorf("pause = %+v; want the agent's words and the event's reset, ten seconds away", lim)
	}
	if n, _ := tf.Metadata.Object("taskd").Int("failures"); n != 0 {
		t.Errorf("a pause counted as %d failures", n)
	}
	h.waitState("l", "1", task.Succeeded, time.Minute)

	// The text form alone, naming a time of day in Lisbon two to three
	// hours from now, whatever the time of day the test runs at (a time
	// that passed within the hour names no reset: the daemon reads the
	// wall clock).
	before := time.Now()
	at := before.In(lisbon).Add(3 * time.Hour)
	want := time.Date(at.Year(), at.Month(), at.Day(), at.Hour(), 0, 0, 0, lisbon)
	said := "You've hit your limit · resets " + want.Format("3pm") + " (Europe/Lisbon)"
	h.drop("m", "1", execTask("text form", `echo "`+said+`"; exit 1`, "taskd.agent", `"plan"`))
	tf = h.waitState("m", "1", task.Paused, time.Minute)
	lim = pauseOf(tf)
	if !lim.ResetsAt.Equal(want) || !lim.Until.Equal(want) {
		t.Errorf("pause = %+v, want a reset at %v", lim, want)
	}
	if at, _ := tf.Metadata.Object("taskd").String("retryAt"); at != task.Stamp(lim.Until) {
		t.Errorf("retryAt %q, want the pause's end %v", at, lim.Until)
	}
	out, err := exec.Command(taskdBinary(t), "status", "--root", h.root, "--list", "m", "--color", "never").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "paused: usage limit, resumes ") || !strings.Contains(string(out), "limit: "+said) {
		t.Errorf("taskd status (%v):\n%s", err, out)
	}
	if !strings.Contains(string(out), want.Local().Format("15:04")) {
		t.Errorf("taskd status does not say the task resumes at %s:\n%s", want.Local().Format("15:04"), out)
	}

	// Another task of the paused profile waits; one of another profile,
	// after it in the same list of one slot, runs.
	h.drop("m", "2", execTask("same profile", "true", "taskd.agent", `"plan"`))
	h.waitEvents("m", eventlog.TaskAccepted, "2", 1)
	h.drop("m", "3", execTask("other profile", "true"))
	h.waitState("m", "3", task.Succeeded, time.Minute)
	if tf := h.read("m", "2"); task.Of(tf) != task.None || countEvents(h.events("m"), eventlog.TaskStarted, "2") != 0 {
		t.Errorf("a task of the paused profile started: state %q\n%s", task.Of(tf), tf.Raw())
	}
}
