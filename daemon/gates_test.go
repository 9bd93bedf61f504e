package daemon_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/control"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
)

// lastMessage returns the last user message of a Messages API request
// body, as JSON: what the CLI asks now, whatever its session said before.
// (The CLI may put a message of its own, role system, after it.)
func lastMessage(body string) string {
	var req struct {
		Messages []json.RawMessage `json:"messages"`
	}
	json.Unmarshal([]byte(body), &req)
	for i := len(req.Messages) - 1; i >= 0; i-- {
		var m struct{ Role string }
		if json.Unmarshal(req.Messages[i], &m) == nil && m.Role == "user" {
			return string(req.Messages[i])
		}
	}
	return ""
}

// counter counts calls by key, for a stub that answers the nth time of
// something differently.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) next(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[key]++
	return c.n[key]
}

// againRun reads cmd.json and result.json of the folder asked again inside
// run folder dir (sub, e.g. "verdict" or "judge-verdict").
func againRun(t *testing.T, dir, sub string) (argv []string, res agent.Result) {
	t.Helper()
	var cmd struct{ Argv []string }
	data, err := os.ReadFile(filepath.Join(dir, sub, "cmd.json"))
	if err != nil {
		t.Fatalf("the question asked again left no cmd.json: %v", err)
	}
	json.Unmarshal(data, &cmd)
	data, _ = os.ReadFile(filepath.Join(dir, sub, "result.json"))
	json.Unmarshal(data, &res)
	return cmd.Argv, res
}

// resultOf reads result.json of run folder dir.
func resultOf(t *testing.T, dir string) agent.Result {
	t.Helper()
	var res agent.Result
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil || json.Unmarshal(data, &res) != nil {
		t.Fatalf("result.json of %s: %v\n%s", dir, err, data)
	}
	return res
}

// resumes reports whether argv continues session.
func resumes(argv []string, session string) bool {
	i := slices.Index(argv, "--resume")
	return session != "" && i >= 0 && i+1 < len(argv) && argv[i+1] == session && !slices.Contains(argv, "--fork-session")
}

// TestGates_QuickTaskReviewerProse runs the built-in quick-task workflow
// with the real Claude Code CLI. Its reviewer rejects in prose, with no
// verdict line. In case A it gives none when asked again either (in the
// same session: the request has the earlier conversation, the run has
// --resume): the task is not succeeded but needs a person, who is shown
// the answer; answered failed, the work is done again, told the review,
// and the second review passes. In case B the answer it gives when asked
// again is the verdict, failed, and the workflow follows it. Neither
// question asked again is an attempt of its own.
func TestGates_QuickTaskReviewerProse(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	var reviews counter
	stub := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		last := lastMessage(body)
		caseB := strings.Contains(body, "case B")
		switch {
		case strings.Contains(last, "Your answer has no verdict line"):
			if caseB {
				return claudestub.Turn{Text: `{"success": false, "summary": "the tests still fail"}`}
			}
			return claudestub.Turn{Text: "As I said, I would not approve it."}
		case strings.Contains(last, "## Step: Check the work"):
			key := "A"
			if caseB {
				key = "B"
			}
			if reviews.next(key) == 1 {
				return claudestub.Turn{Text: "I would not approve this change: the tests still fail."}
			}
			return claudestub.Turn{Text: `The tests pass now. {"success": true, "summary": "approved"}`}
		}
		return claudestub.Turn{Text: `Done. {"success": true, "summary": "made the change"}`}
	})
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = streamingClaude(t, bin, stub, config.ProfileSpec{})
	})
	project := t.TempDir()
	cwd := `{"cwd": "` + project + `"}`
	h.drop("l", "1", flowTask("1", "quick-task", "Add a greeting (case A)", cwd))
	h.drop("l", "2", flowTask("2", "quick-task", "Add a greeting (case B)", cwd))
	runs := func(id string) string { return filepath.Join(h.listDir("l"), ".taskd", "runs", id) }

	// Case A: no verdict, not even asked again.
	tf := h.waitState("l", "1", task.NeedsHuman, 3*time.Minute)
	hitl := tf.Metadata.Object("taskd").Object("hitl")
	kind, _ := hitl.String("kind")
	reason, _ := hitl.String("reason")
	said, _ := hitl.String("answer")
	run, _ := hitl.Int("run")
	if kind != "verdict" || run != 2 || !strings.Contains(reason, `step "Check the work" (verify) gave no verdict, and none when asked again`) ||
		!strings.Contains(reason, "I would not approve this change: the tests still fail.") {
		t.Errorf("hitl kind %q run %d reason %q", kind, run, reason)
	}
	if !strings.Contains(said, "I would not approve this change") || !strings.Contains(said, "As I said") {
		t.Errorf("hitl.answer %q lacks what the reviewer said", said)
	}
	if got := task.Strings(hitl, "options"); !slices.Equal(got, []string{"passed", "failed", "leave"}) {
		t.Errorf("options %v", got)
	}
	first := resultOf(t, filepath.Join(runs("1"), "2"))
	argv, _ := againRun(t, filepath.Join(runs("1"), "2"), "verdict")
	if !resumes(argv, first.SessionID) {
		t.Errorf("asked again with %q, want --resume %s", argv, first.SessionID)
	}
	if _, err := os.Stat(filepath.Join(runs("1"), "3")); !os.IsNotExist(err) {
		t.Errorf("asking again made a run folder of its own (%v)", err)
	}
	var asked []string
	for _, b := range stub.Bodies() {
		if last := lastMessage(b); strings.Contains(last, "Your answer has no verdict line") && strings.Contains(b, "case A") {
			asked = append(asked, b)
		}
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "## Step: Check the work") || !strings.Contains(asked[0], "I would not approve this change") {
		t.Errorf("the stub was asked again %d times, want once with the earlier conversation", len(asked))
	}
	if _, err := control.ResolveNote(t.Context(), mustOpen(t, h.listDir("l")), "1", "failed", "make the tests pass"); err != nil {
		t.Fatal(err)
	}
	tf = h.waitState("l", "1", task.Succeeded, 3*time.Minute)
	if got, want := steps(tf), "work:passed:advance verify:failed:retry work:passed:advance verify:passed:advance"; got != want {
		t.Errorf("case A path\n got %s\nwant %s", got, want)
	}
	if p := h.runFile("l", "1", 3, "prompt.md"); !strings.Contains(string(p), "I would not approve this change: the tests still fail.") || !strings.Contains(string(p), "make the tests pass") {
		t.Errorf("the work done again is not told the review and the note:\n%s", p)
	}

	// Case B: the verdict, asked again, decides.
	tf = h.waitState("l", "2", task.Succeeded, 3*time.Minute)
	if got, want := steps(tf), "work:passed:advance verify:failed:retry work:passed:advance verify:passed:advance"; got != want {
		t.Errorf("case B path\n got %s\nwant %s", got, want)
	}
	review := resultOf(t, filepath.Join(runs("2"), "2"))
	if review.Success || review.Summary != "the tests still fail" || !strings.Contains(review.Output, "I would not approve this change") {
		t.Errorf("the review's result %+v", review)
	}
	argv, again := againRun(t, filepath.Join(runs("2"), "2"), "verdict")
	if !resumes(argv, review.SessionID) || again.SessionID != review.SessionID {
		t.Errorf("asked again with %q (session %s), want --resume %s", argv, again.SessionID, review.SessionID)
	}
	if n, _ := tf.Metadata.Object("taskd").Int("attempt"); n != 4 {
		t.Errorf("case B took %d runs, want 4", n)
	}
	if n := countEvents(h.events("l"), eventlog.TaskNeedsHuman, "2"); n != 0 {
		t.Errorf("case B asked a person %d times", n)
	}
}

// TestGates_ConvergeVoteProse: three subagents on the real Claude Code CLI
// answer a question to vote on in prose. Told the answer format, and asked
// again in their sessions, two give it; the third does not: it is not
// counted as abstaining, it waits for a person with its answer shown, and
// the parent is not done. A person lets it abstain, and the vote ends.
func TestGates_ConvergeVoteProse(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	stub := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		last := lastMessage(body)
		voter := ""
		for _, v := range []string{"voter 1", "voter 2", "voter 3"} {
			if strings.Contains(body, "("+v+")") {
				voter = v
			}
		}
		if strings.Contains(last, "Your answer has no answer line") {
			switch voter {
			case "voter 1":
				return claudestub.Turn{Text: `{"success": true, "summary": "reads favour recency", "answer": "lru"}`}
			case "voter 2":
				return claudestub.Turn{Text: `{"success": true, "summary": "same", "answer": "LRU"}`}
			}
			return claudestub.Turn{Text: "LFU, as I said."}
		}
		if voter == "voter 3" {
			return claudestub.Turn{Text: "Probably LFU, for a skewed workload."}
		}
		return claudestub.Turn{Text: "LRU fits a read-heavy workload best."}
	})
	h := startSubagents(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = streamingClaude(t, bin, stub, config.ProfileSpec{})
		fc.Agents["analyzer"] = "claude"
	})
	cwd := t.TempDir()
	var lines []string
	for _, v := range []string{"voter 1", "voter 2", "voter 3"} {
		lines = append(lines, `/delegate "Which cache policy fits a read-heavy workload, lru or lfu? (`+v+`)" --agent-type analyzer`)
	}
	lines = append(lines, "/converge analyzer-1 analyzer-2 analyzer-3 --strategy vote", "", `printf '%s' "$TASKD_RESULTS" > results.txt`)
	h.drop("l", "p", parentTask(strings.Join(lines, "\n"), cwd, nil))
	ids := map[string]string{}
	for _, n := range []string{"1", "2", "3"} {
		ids[n] = h.childNamed("l", "p", "analyzer-"+n)
	}
	runs := func(id string) string { return filepath.Join(h.listDir("l"), ".taskd", "runs", id, "1") }

	third := h.waitState("l", ids["3"], task.NeedsHuman, 3*time.Minute)
	hitl := third.Metadata.Object("taskd").Object("hitl")
	kind, _ := hitl.String("kind")
	gate, _ := hitl.String("gate")
	reason, _ := hitl.String("reason")
	if kind != "verdict" || gate != "vote" || !strings.Contains(reason, "Probably LFU, for a skewed workload.") || !strings.Contains(reason, "none when asked again") {
		t.Errorf("hitl kind %q gate %q reason %q", kind, gate, reason)
	}
	if got := task.Strings(hitl, "options"); !slices.Equal(got, []string{"abstain", "retry", "fail", "leave"}) {
		t.Errorf("options %v", got)
	}
	first := resultOf(t, runs(ids["3"]))
	if argv, _ := againRun(t, runs(ids["3"]), "verdict"); !resumes(argv, first.SessionID) {
		t.Errorf("voter 3 asked again with %q, want --resume %s", argv, first.SessionID)
	}
	for _, n := range []string{"1", "2"} {
		tf := h.waitState("l", ids[n], task.Succeeded, 3*time.Minute)
		res := resultOf(t, runs(ids[n]))
		if !strings.EqualFold(res.Answer, "lru") || !strings.Contains(res.Output, "LRU fits a read-heavy workload best.") {
			t.Errorf("voter %s: answer %q output %q", n, res.Answer, res.Output)
		}
		if a, _ := tf.Metadata.Object("taskd").Object("result").String("answer"); !strings.EqualFold(a, "lru") {
			t.Errorf("voter %s: metadata.taskd.result.answer %q", n, a)
		}
		if p := h.runFile("l", ids[n], 1, "prompt.md"); !strings.Contains(string(p), `"answer": "your answer, in a few words"`) {
			t.Errorf("voter %s was not told the answer format:\n%s", n, p)
		}
	}
	if p := h.read("l", "p"); task.Of(p) == task.Succeeded || task.Of(p).Ended() {
		t.Fatalf("the parent ended (%s) while a voter waits for a person", task.Of(p))
	}

	if _, err := control.Resolve(t.Context(), mustOpen(t, h.listDir("l")), ids["3"], "abstain"); err != nil {
		t.Fatal(err)
	}
	h.waitState("l", ids["3"], task.Succeeded, time.Minute)
	h.waitState("l", "p", task.Succeeded, 2*time.Minute)
	var cv convergedFile
	data, err := os.ReadFile(filepath.Join(h.listDir("l"), ".taskd", "runs", "p", "1", "converged.json"))
	if err != nil || json.Unmarshal(data, &cv) != nil {
		t.Fatalf("converged.json: %v\n%s", err, data)
	}
	roles := map[string]string{}
	for _, c := range cv.Children {
		roles[c.ID] = c.Role
	}
	if !cv.Success || !strings.EqualFold(cv.Answer.(string), "lru") || roles[ids["3"]] != "abstained" {
		t.Errorf("converged: success %v answer %v roles %v (%s)", cv.Success, cv.Answer, roles, cv.Reason)
	}
}

// TestGates_UntilJudgeProse: a loop's judge on the real Claude Code CLI
// answers in prose. Asked again in its session, it still gives no verdict:
// the loop neither goes on nor ends by itself, the task waits for a person
// with the judge's answer shown. Answered continue, the next iteration
// runs; its judge, asked again, says break, and the loop ends satisfied.
func TestGates_UntilJudgeProse(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	stub := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		last := lastMessage(body)
		switch {
		case strings.Contains(last, "Your answer has no verdict, and the loop goes on"):
			if strings.Contains(body, "The task has now run 2 of at most 3 times.") {
				return claudestub.Turn{Text: "<subtask2 loop=break/>"}
			}
			return claudestub.Turn{Text: "I think so."}
		case strings.Contains(last, "You are checking whether a repeated task is finished"):
			return claudestub.Turn{Text: "The file seems to be there."}
		}
		return claudestub.Turn{Text: `Made it. {"success": true, "summary": "wrote done.txt"}`}
	})
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = streamingClaude(t, bin, stub, config.ProfileSpec{})
	})
	cwd := t.TempDir()
	h.drop("l", "1", `{"subject": "loop", "owner": "taskd", "metadata": {"taskd": {"agent": "claude", "cwd": "`+cwd+`", "prompt": "/subtask {loop:3 && until:the file done.txt exists} Create done.txt."}}}`)
	runs := func(n string) string { return filepath.Join(h.listDir("l"), ".taskd", "runs", "1", n) }

	tf := h.waitState("l", "1", task.NeedsHuman, 3*time.Minute)
	m := tf.Metadata.Object("taskd")
	hitl := m.Object("hitl")
	gate, _ := hitl.String("gate")
	reason, _ := hitl.String("reason")
	if gate != "until" || !strings.Contains(reason, "the judge of the loop's condition gave no verdict, and none when asked again") ||
		!strings.Contains(reason, "The file seems to be there. I think so.") {
		t.Errorf("hitl gate %q reason %q", gate, reason)
	}
	if got := task.Strings(hitl, "options"); !slices.Equal(got, []string{"break", "continue", "fail", "leave"}) {
		t.Errorf("options %v", got)
	}
	if n, ok := m.Int("loopIteration"); ok || n != 0 {
		t.Errorf("loopIteration %d: the loop went on by itself", n)
	}
	if _, err := os.Stat(runs("2")); !os.IsNotExist(err) {
		t.Errorf("a second iteration ran without a verdict (%v)", err)
	}
	judged := resultOf(t, filepath.Join(runs("1"), "judge"))
	if argv, _ := againRun(t, runs("1"), "judge-verdict"); !resumes(argv, judged.SessionID) {
		t.Errorf("the judge was asked again with %q, want --resume %s", argv, judged.SessionID)
	}

	if _, err := control.Resolve(t.Context(), mustOpen(t, h.listDir("l")), "1", "continue"); err != nil {
		t.Fatal(err)
	}
	tf = h.waitState("l", "1", task.Succeeded, 3*time.Minute)
	m = tf.Metadata.Object("taskd")
	if n, _ := m.Int("loopIteration"); n != 2 {
		t.Errorf("loopIteration %d, want 2", n)
	}
	if exit, _ := m.String("loopExit"); exit != "satisfied" {
		t.Errorf("loopExit %q, want satisfied", exit)
	}
	var by []string
	for _, ev := range h.events("l") {
		if ev.Type == eventlog.LoopIteration && ev.Task == "1" {
			by = append(by, ev.Data["by"].(string)+":"+ev.Data["verdict"].(string))
		}
	}
	if got, want := strings.Join(by, " "), "person:continue judge:break"; got != want {
		t.Errorf("iterations decided %q, want %q", got, want)
	}
	if res := resultOf(t, filepath.Join(runs("2"), "judge")); judgeText(res.Output) != "break" {
		t.Errorf("the second judge's result %q lacks its verdict", res.Output)
	}
}

// judgeText is the verdict a judge's recorded answer ends with.
func judgeText(out string) string {
	switch {
	case strings.HasSuffix(out, "<subtask2 loop=break/>"):
		return "break"
	case strings.HasSuffix(out, "<subtask2 loop=continue/>"):
		return "continue"
	}
	return ""
}

// TestGates_AllowExactlyTheRefusedCall: the real Claude Code CLI is refused
// `python3 test_calc.py` (no permission mode). Answered allow, the next
// attempt continues the same session with exactly that command allowed —
// not all of Bash — and is told so: the command runs, the session goes on
// where it stopped (the stub is asked once more per turn, never the task
// anew), and the task succeeds. Answered allow-tool with a note, a second
// task gets the whole tool, and its continued session the note.
func TestGates_AllowExactlyTheRefusedCall(t *testing.T) {
	t.Parallel()
	bin := claudestub.Binary(t)
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no python3")
	}
	stub := claudestub.New(t, func(_ int, body string) claudestub.Turn {
		last := lastMessage(body)
		switch {
		case strings.Contains(last, "A person has allowed the tool calls you were refused"):
			return claudestub.Turn{Bash: "python3 test_calc.py"}
		case strings.Contains(last, `"tool_result"`) && strings.Contains(last, "2 tests OK"):
			return claudestub.Turn{Text: `The tests pass. {"success": true, "summary": "2 tests pass"}`}
		case strings.Contains(last, `"tool_result"`):
			return claudestub.Turn{Text: "I could not run the tests: the command was refused."}
		}
		return claudestub.Turn{Bash: "python3 test_calc.py"}
	})
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = streamingClaude(t, bin, stub, config.ProfileSpec{})
	})
	projects := map[string]string{}
	for _, id := range []string{"1", "2"} {
		p := t.TempDir()
		test := "import pathlib\npathlib.Path('ran.txt').write_text('ran\\n')\nprint('2 tests OK')\n"
		if err := os.WriteFile(filepath.Join(p, "test_calc.py"), []byte(test), 0o644); err != nil {
			t.Fatal(err)
		}
		projects[id] = p
		h.drop("l", id, `{"subject": "run the tests `+id+`", "owner": "taskd", "metadata": {"taskd": {"agent": "claude", "cwd": "`+p+`", "prompt": "Run the calculator tests (`+id+`)."}}}`)
	}
	rule := "Bash(python3 test_calc.py)"
	for _, id := range []string{"1", "2"} {
		tf := h.waitState("l", id, task.NeedsHuman, 2*time.Minute)
		hitl := tf.Metadata.Object("taskd").Object("hitl")
		if got := task.Strings(hitl, "grant"); !slices.Equal(got, []string{rule}) {
			t.Errorf("task %s: the grant offered is %v, want [%s]", id, got, rule)
		}
		if reason, _ := hitl.String("reason"); !strings.Contains(reason, "Answer allow to allow exactly "+rule+", or allow-tool to allow all of Bash") {
			t.Errorf("task %s: reason %q", id, reason)
		}
		if _, err := os.Stat(filepath.Join(projects[id], "ran.txt")); !os.IsNotExist(err) {
			t.Errorf("task %s: the refused command ran (%v)", id, err)
		}
	}
	asked := func(id string) int {
		n := 0
		for _, b := range stub.Bodies() {
			if strings.Contains(b, "Run the calculator tests ("+id+")") {
				n++
			}
		}
		return n
	}
	before := asked("1")
	session := resultOf(t, filepath.Join(h.listDir("l"), ".taskd", "runs", "1", "1")).SessionID

	dir := mustOpen(t, h.listDir("l"))
	if _, err := control.Resolve(t.Context(), dir, "1", "allow"); err != nil {
		t.Fatal(err)
	}
	tf := h.waitState("l", "1", task.Succeeded, 2*time.Minute)
	argv := h.argvOf("l", "1", 2)
	if i := slices.Index(argv, "--allowedTools"); i < 0 || argv[i+1] != rule {
		t.Errorf("the second attempt's argv %q does not allow exactly %s", argv, rule)
	}
	if !resumes(argv, session) {
		t.Errorf("the second attempt's argv %q does not continue session %s", argv, session)
	}
	if tools := task.Strings(tf.Metadata.Object("taskd"), "tools"); !slices.Equal(tools, []string{rule}) {
		t.Errorf("tools after allow = %v", tools)
	}
	if _, ok := tf.Metadata.Object("taskd").Get("grant"); ok {
		t.Errorf("the grant outlived the attempt it was for")
	}
	if data, err := os.ReadFile(filepath.Join(projects["1"], "ran.txt")); err != nil || string(data) != "ran\n" {
		t.Errorf("the allowed command did not run: %q, %v", data, err)
	}
	// Continued, not started over: one request to run the command again and
	// one with its output; each carries the earlier turns once, as history.
	bodies := stub.Bodies()
	var mine []string
	for _, b := range bodies {
		if strings.Contains(b, "Run the calculator tests (1)") {
			mine = append(mine, b)
		}
	}
	if got := len(mine) - before; got != 2 {
		t.Errorf("the continued session asked the stub %d times, want 2", got)
	}
	for _, b := range mine[before:] {
		if n := strings.Count(b, "Run the calculator tests (1)"); n != 1 {
			t.Errorf("the task's prompt is in a continued request %d times, want once (the history)", n)
		}
		if !strings.Contains(b, "I could not run the tests: the command was refused.") {
			t.Errorf("a continued request lacks the earlier conversation")
		}
	}
	if r := resultOf(t, filepath.Join(h.listDir("l"), ".taskd", "runs", "1", "2")); r.SessionID != session || !r.Success {
		t.Errorf("the second attempt's result: session %s success %v, want %s true", r.SessionID, r.Success, session)
	}

	note := "NOTE-2: run only the quick tests."
	if _, err := control.ResolveNote(t.Context(), dir, "2", "allow-tool", note); err != nil {
		t.Fatal(err)
	}
	tf = h.waitState("l", "2", task.Succeeded, 2*time.Minute)
	// The note given with the answer goes to the continued session.
	if p := string(h.runFile("l", "2", 2, "prompt.md")); !strings.Contains(p, "A person has allowed the tool calls you were refused") || !strings.Contains(p, note) {
		t.Errorf("allow-tool with a note: the continued session was told %q", p)
	}
	if !slices.ContainsFunc(stub.Bodies(), func(b string) bool { return strings.Contains(lastMessage(b), note) }) {
		t.Errorf("allow-tool with a note: the CLI did not send the note")
	}
	argv = h.argvOf("l", "2", 2)
	if i := slices.Index(argv, "--allowedTools"); i < 0 || argv[i+1] != "Bash" {
		t.Errorf("allow-tool: argv %q does not allow Bash", argv)
	}
	if s := resultOf(t, filepath.Join(h.listDir("l"), ".taskd", "runs", "2", "1")).SessionID; !resumes(argv, s) {
		t.Errorf("allow-tool: argv %q does not continue session %s", argv, s)
	}
	if tools := task.Strings(tf.Metadata.Object("taskd"), "tools"); !slices.Equal(tools, []string{"Bash"}) {
		t.Errorf("tools after allow-tool = %v", tools)
	}
}
