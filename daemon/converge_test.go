package daemon_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/subagent"
	"github.com/taskd/taskd/daemon/task"
)

// kid is a constructed child. Kids finish in the order of their rank
// (rank 1 first): each waits until the daemon has recorded the end of the
// sibling ranked before it, then prints a result with fields (exiting 1
// when it reports failure). A hanging kid never finishes.
type kid struct {
	rank   int
	fields string
	fail   bool
	hang   bool
}

// script is the command of kid n (1-based) among kids.
func (k kid) script(n int, kids []kid) string {
	if k.hang {
		// Longer than the whole test takes under any load: a hanging kid
		// ends only by the cancel the test expects, never by itself.
		return fmt.Sprintf("echo $$ > kid%d.pid; exec sleep 900", n)
	}
	ok, code := "true", "0"
	if k.fail {
		ok, code = "false", "1"
	}
	wait := ""
	for m, o := range kids {
		if !o.hang && o.rank == k.rank-1 {
			// The file of the sibling named analyzer-m, of the same
			// parent, says it ended: the end the daemon records for this
			// kid is later than its.
			wait = fmt.Sprintf(`until grep -lE '"name": *"analyzer-%d"' "$(dirname "$TASKD_TASK_FILE")"/*.json | xargs -r grep -lE "\"parent\": *\"$TASKD_PARENT\"" | xargs -r grep -qE '"state": *"(succeeded|failed)"'; do sleep 0.02; done; `, m+1)
		}
	}
	return fmt.Sprintf(`%secho '{"success": %s, "summary": "kid %d", %s}'; exit %s`, wait, ok, n, k.fields, code)
}

// convergedFile is converged.json as tests read it.
type convergedFile struct {
	Success     bool
	Reason      string
	Winner      string
	Answer      any
	Files       map[string]string
	Conflicts   []struct{ Kind, Key string }
	Resolutions []struct {
		Method, Winner string
		Overridden     []string
	}
	Children  []struct{ ID, Role, State string }
	Cancelled []string
}

// TestConverge_Strategies runs each strategy with each conflict resolution
// over children that report constructed results, finishing in order
// (kid 1 first): conflicts on files and answer keys, a vote tie, a
// consensus failure, numbers within a tolerance, first_success cancelling
// two slower children, and manual conflicts a person resolves by editing
// the parent's file.
func TestConverge_Strategies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, strategy, resolution, format string
		tolerance                          any
		kids                               []kid
		answer                             int // manual: the kid (1-based) a person picks
		wantSuccess                        bool
		wantAnswer                         any
		wantWinner                         int // 0: none
		wantConflicts, wantResolutions     int
		wantOverridden                     []int
		wantFiles                          map[string]int
		wantCancelled                      []int
	}{
		{name: "merge files manual", strategy: "merge", resolution: "manual", format: "json",
			kids:   []kid{{1, `"files": ["a.go", "b.go"]`, false, false}, {2, `"files": ["c.go"]`, false, false}, {3, `"files": ["a.go"]`, false, false}},
			answer: 3, wantSuccess: true, wantConflicts: 1, wantResolutions: 1, wantOverridden: []int{1},
			wantFiles: map[string]int{"a.go": 3, "b.go": 1, "c.go": 2}},
		{name: "merge keys latest", strategy: "merge", resolution: "auto_accept_latest", format: "markdown",
			kids:        []kid{{1, `"answer": {"x": "1", "y": "2"}`, false, false}, {3, `"answer": {"x": "3"}`, false, false}, {2, `"answer": {"z": "4"}`, false, false}},
			wantSuccess: true, wantAnswer: map[string]any{"x": "3", "y": "2", "z": "4"}, wantConflicts: 1, wantResolutions: 1, wantOverridden: []int{1}},
		{name: "merge confidence", strategy: "merge", resolution: "prefer_higher_confidence", format: "delta_batch",
			kids:        []kid{{1, `"answer": "A", "confidence": 0.9`, false, false}, {2, `"answer": "B", "confidence": 0.4`, false, false}},
			wantSuccess: true, wantAnswer: "A", wantConflicts: 1, wantResolutions: 1, wantOverridden: []int{2}},
		{name: "merge without conflicts, one failed", strategy: "merge", resolution: "manual", format: "json",
			kids:        []kid{{1, `"files": ["a.go"]`, false, false}, {2, `"files": ["b.go"]`, true, false}},
			wantSuccess: false, wantFiles: map[string]int{"a.go": 1}},
		{name: "vote majority", strategy: "vote", resolution: "manual", format: "json",
			kids:        []kid{{1, `"answer": "42"`, false, false}, {2, `"answer": " 42 "`, false, false}, {3, `"answer": "7"`, false, false}},
			wantSuccess: true, wantAnswer: "42"},
		{name: "vote tie manual", strategy: "vote", resolution: "manual", format: "json",
			kids:   []kid{{1, `"answer": "a"`, false, false}, {2, `"answer": "b"`, false, false}, {3, `"answer": "c"`, false, false}},
			answer: 2, wantSuccess: true, wantAnswer: "b", wantWinner: 2, wantConflicts: 1, wantResolutions: 1, wantOverridden: []int{1, 3}},
		{name: "vote tie latest", strategy: "vote", resolution: "auto_accept_latest", format: "json",
			kids:        []kid{{1, `"answer": "a"`, false, false}, {3, `"answer": "b"`, false, false}, {2, `"answer": "c"`, false, false}},
			wantSuccess: true, wantAnswer: "b", wantWinner: 2, wantConflicts: 1, wantResolutions: 1, wantOverridden: []int{1, 3}},
		{name: "vote tie confidence", strategy: "vote", resolution: "prefer_higher_confidence", format: "json",
			kids:        []kid{{1, `"answer": "a", "confidence": 0.2`, false, false}, {2, `"answer": "b", "confidence": 0.9`, false, false}, {3, `"answer": "c", "confidence": 0.5`, false, false}},
			wantSuccess: true, wantAnswer: "b", wantWinner: 2, wantConflicts: 1, wantResolutions: 1, wantOverridden: []int{1, 3}},
		{name: "vote tie without confidence goes to a person", strategy: "vote", resolution: "prefer_higher_confidence", format: "json",
			kids:   []kid{{1, `"answer": "a", "confidence": 0.2`, false, false}, {2, `"answer": "b"`, false, false}, {3, `"answer": "c", "confidence": 0.5`, false, false}},
			answer: 1, wantSuccess: true, wantAnswer: "a", wantWinner: 1, wantConflicts: 1, wantResolutions: 1, wantOverridden: []int{2, 3}},
		{name: "consensus within tolerance", strategy: "consensus", resolution: "manual", format: "json", tolerance: 0.01,
			kids:        []kid{{1, `"answer": "3.14"`, false, false}, {2, `"answer": "3.141"`, false, false}, {3, `"answer": "3.145"`, false, false}},
			wantSuccess: true, wantAnswer: "3.14"},
		{name: "consensus failure manual", strategy: "consensus", resolution: "manual", format: "markdown",
			kids:   []kid{{1, `"answer": "yes"`, false, false}, {2, `"answer": "Yes"`, false, false}, {3, `"answer": "no"`, false, false}},
			answer: 3, wantSuccess: true, wantAnswer: "no", wantWinner: 3, wantConflicts: 1, wantResolutions: 1, wantOverridden: []int{1, 2}},
		{name: "consensus failure latest", strategy: "consensus", resolution: "auto_accept_latest", format: "json",
			kids:        []kid{{1, `"answer": "yes"`, false, false}, {2, `"answer": "no"`, false, false}, {3, `"answer": "yes"`, false, false}},
			wantSuccess: true, wantAnswer: "yes", wantWinner: 3, wantConflicts: 1, wantResolutions: 1, wantOverridden: []int{2}},
		{name: "consensus failure confidence", strategy: "consensus", resolution: "prefer_higher_confidence", format: "json", tolerance: "1%",
			kids:        []kid{{1, `"answer": "100", "confidence": 0.3`, false, false}, {2, `"answer": "120", "confidence": 0.8`, false, false}, {3, `"answer": "100.5", "confidence": 0.5`, false, false}},
			wantSuccess: true, wantAnswer: "120", wantWinner: 2, wantConflicts: 1, wantResolutions: 1, wantOverridden: []int{1, 3}},
		{name: "first_success cancels the slower", strategy: "first_success", resolution: "manual", format: "json",
			kids:        []kid{{1, `"answer": "fast"`, false, false}, {hang: true}, {hang: true}},
			wantSuccess: true, wantAnswer: "fast", wantWinner: 1, wantCancelled: []int{2, 3}},
		{name: "first_success skips a failure", strategy: "first_success", resolution: "auto_accept_latest", format: "delta_batch",
			kids:        []kid{{1, `"answer": "broken"`, true, false}, {2, `"answer": "works"`, false, false}, {hang: true}},
			wantSuccess: true, wantAnswer: "works", wantWinner: 2, wantCancelled: []int{3}},
	}
	h := startSubagents(t, []string{"l"})
	cwds := make([]string, len(tests))
	for i, tt := range tests {
		cwds[i] = t.TempDir()
		var lines, names []string
		for n, k := range tt.kids {
			lines = append(lines, "/delegate "+q(k.script(n+1, tt.kids))+" --agent-type analyzer")
			names = append(names, fmt.Sprintf("analyzer-%d", n+1))
		}
		lines = append(lines, "/converge "+strings.Join(names, " ")+" --strategy "+tt.strategy+
			" --conflict-resolution "+tt.resolution+" --output-format "+tt.format, "",
			`printf '%s' "$TASKD_RESULTS" > results.txt`)
		extra := map[string]any{}
		if tt.tolerance != nil {
			extra["convergeTolerance"] = tt.tolerance
		}
		h.drop("l", fmt.Sprintf("c%02d", i), parentTask(strings.Join(lines, "\n"), cwds[i], extra))
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := h.in(t)
			pid, cwd := fmt.Sprintf("c%02d", i), cwds[i]
			p := h.waitEnded("l", pid, 60*time.Second)
			ids := map[int]string{}
			for n := range tt.kids {
				ids[n+1] = h.childNamed("l", pid, fmt.Sprintf("analyzer-%d", n+1))
			}
			idsOf := func(ns []int) []string {
				out := []string{}
				for _, n := range ns {
					out = append(out, ids[n])
				}
				return out
			}
			runDir := filepath.Join(h.listDir("l"), ".taskd", "runs", pid, "1")
			if tt.answer != 0 {
				if got := stateOf(p); got != task.NeedsHuman {
					t.Fatalf("parent state %q, want needs_human (%s)", got, tdString(p, "error"))
				}
				hitl := p.Metadata.Object("taskd").Object("hitl")
				if k, _ := hitl.String("kind"); k != "converge" {
					t.Errorf("hitl kind %q", k)
				}
				if opts := stringsOf(hitl, "options"); !slices.Contains(opts, ids[tt.answer]) || !slices.Contains(opts, "abort") || !slices.Contains(opts, "leave") {
					t.Errorf("hitl options %v", opts)
				}
				if _, err := os.Stat(filepath.Join(runDir, "converged.json")); err == nil {
					t.Errorf("output written before a person resolved the conflicts")
				}
				h.waitEvents("l", eventlog.ManualReviewRequired, pid, 1)
				answer(t, h, pid, ids[tt.answer]) // by editing the file
				p = h.waitState("l", pid, task.Succeeded, 30*time.Second)
			}
			if got := stateOf(p); got != task.Succeeded {
				t.Fatalf("parent state %q (%s), want succeeded", got, tdString(p, "error"))
			}
			var cv convergedFile
			data, err := os.ReadFile(filepath.Join(runDir, "converged.json"))
			if err != nil || json.Unmarshal(data, &cv) != nil {
				t.Fatalf("converged.json: %v\n%s", err, data)
			}
			if cv.Success != tt.wantSuccess || !equalJSON(cv.Answer, tt.wantAnswer) {
				t.Errorf("success %v answer %v (%s), want %v %v", cv.Success, mustJSON(cv.Answer), cv.Reason, tt.wantSuccess, tt.wantAnswer)
			}
			if want := ids[tt.wantWinner]; cv.Winner != want {
				t.Errorf("winner %q, want %q", cv.Winner, want)
			}
			if len(cv.Conflicts) != tt.wantConflicts || len(cv.Resolutions) != tt.wantResolutions {
				t.Errorf("%d conflicts, %d resolutions, want %d, %d", len(cv.Conflicts), len(cv.Resolutions), tt.wantConflicts, tt.wantResolutions)
			}
			if tt.wantOverridden != nil && len(cv.Resolutions) > 0 {
				r := cv.Resolutions[0]
				wantMethod := tt.resolution
				if tt.answer != 0 {
					wantMethod = "manual"
				}
				if !equalJSON(r.Overridden, idsOf(tt.wantOverridden)) || r.Method != wantMethod {
					t.Errorf("resolution %+v, want overridden %v by %s", r, idsOf(tt.wantOverridden), wantMethod)
				}
			}
			if tt.wantFiles != nil {
				want := map[string]string{}
				for f, n := range tt.wantFiles {
					want[f] = ids[n]
				}
				if !equalJSON(cv.Files, want) {
					t.Errorf("files %v, want %v", cv.Files, want)
				}
			}
			if tt.wantCancelled != nil {
				if !equalJSON(cv.Cancelled, idsOf(tt.wantCancelled)) {
					t.Errorf("cancelled %v, want %v", cv.Cancelled, idsOf(tt.wantCancelled))
				}
				for _, n := range tt.wantCancelled {
					c := h.read("l", ids[n])
					if s := stateOf(c); s != task.Cancelled {
						t.Errorf("kid %d state %q, want cancelled (not failed)", n, s)
					}
					if ran, _ := c.Metadata.Object("taskd").Int("attempt"); ran == 0 {
						continue // cancelled before it started: no process to look for
					}
					if pidN := readPid(t, filepath.Join(cwd, fmt.Sprintf("kid%d.pid", n))); alive(pidN) {
						t.Errorf("kid %d's process %d is still alive", n, pidN)
					}
				}
			}
			out := map[string]string{"json": "converged.json", "markdown": "converged.md", "delta_batch": "converged.jsonl"}[tt.format]
			content, err := os.ReadFile(filepath.Join(runDir, out))
			if err != nil {
				t.Fatalf("output %s: %v", out, err)
			}
			checkFormat(t, tt.format, content)
			results, _ := os.ReadFile(filepath.Join(cwd, "results.txt"))
			if !strings.Contains(string(results), "## Converged result of tasks") || !strings.Contains(string(results), strings.TrimSpace(string(content))) {
				t.Errorf("the parent's agent did not get the output:\n%s", results)
			}
			evs := h.events("l")
			checkSequence(t, evs, []wantEvent{
				{eventlog.ConvergenceInitiated, pid, map[string]any{"subagent_ids": idsOf(keys(len(tt.kids))), "strategy": tt.strategy,
					"conflict_resolution": tt.resolution, "output_format": tt.format, "line": len(tt.kids) + 1}},
				{eventlog.ConvergenceComplete, pid, map[string]any{"conflict_count": tt.wantConflicts,
					"resolution_count": tt.wantResolutions, "output_size": len(content)}},
			})
			if n := countEvents(evs, eventlog.ConvergenceComplete, pid); n != 1 {
				t.Errorf("%d ConvergenceComplete events, want 1", n)
			}
			detected := 0
			for _, ev := range evs {
				if ev.Task == pid && ev.Type == eventlog.TranscriptEvent && ev.Data["event_type"] == "conflict_detected" {
					detected++
				}
			}
			if detected != tt.wantConflicts {
				t.Errorf("%d conflict_detected events, want %d", detected, tt.wantConflicts)
			}
		})
	}
	// taskd metrics reads the same story from the event logs.
	var spawned, cancelled, withConflicts, manual int
	for _, tt := range tests {
		spawned += len(tt.kids)
		cancelled += len(tt.wantCancelled)
		withConflicts += min(tt.wantConflicts, 1)
		manual += min(tt.answer, 1)
	}
	m := metricsOf(t, h)
	c := m.Convergences
	if m.Spawned != spawned || m.ByType["analyzer"].Spawned != spawned || m.Cancelled != cancelled ||
		c.Initiated != len(tests) || c.Completed != len(tests) || c.WithConflicts != withConflicts || c.ManualReviews != manual {
		t.Errorf("metrics = %+v %+v, want %d spawned, %d cancelled, %d convergences, %d with conflicts, %d manual reviews",
			m, c, spawned, cancelled, len(tests), withConflicts, manual)
	}
	if got, want := c.ConflictRate, float64(withConflicts)/float64(len(tests)); got != want {
		t.Errorf("conflict rate %v, want %v", got, want)
	}
}

// metricsOf runs taskd metrics --json on the harness's root.
func metricsOf(t *testing.T, h *harness) subagent.Metrics {
	t.Helper()
	out, err := exec.Command(taskdBinary(t), "metrics", "--root", h.root, "--json").Output()
	if err != nil {
		t.Fatalf("taskd metrics: %v", err)
	}
	var m subagent.Metrics
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("taskd metrics --json: %v\n%s", err, out)
	}
	return m
}

func keys(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// checkFormat checks an output file against its format.
func checkFormat(t *testing.T, format string, content []byte) {
	t.Helper()
	switch format {
	case "json":
		if !json.Valid(content) {
			t.Errorf("converged.json is not JSON")
		}
	case "markdown":
		if !strings.HasPrefix(string(content), "# Converged result (") || !strings.Contains(string(content), "| task | name | state | role |") {
			t.Errorf("converged.md:\n%s", content)
		}
	case "delta_batch":
		sc := bufio.NewScanner(strings.NewReader(string(content)))
		n := 0
		for sc.Scan() {
			var line map[string]any
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("converged.jsonl line %d: %v", n+1, err)
			}
			want := "delta"
			if n == 0 {
				want = "batch"
			}
			if line["type"] != want {
				t.Errorf("line %d type %v, want %s", n+1, line["type"], want)
			}
			n++
		}
		if n < 2 {
			t.Errorf("converged.jsonl has %d lines", n)
		}
	}
}

// TestConverge_Command runs taskd converge inside an agent: a vote tie
// for manual review makes the command exit 3 and the task needs_human
// when its agent exits; a person's answer runs the agent again, and the
// same taskd converge then writes the output.
func TestConverge_Command(t *testing.T) {
	t.Parallel()
	h := startSubagents(t, []string{"l"})
	cwd := t.TempDir()
	script := `if ! taskd queue | grep -q tester-1; then
  for a in a b c; do taskd delegate "echo '{\"success\": true, \"answer\": \"$a\"}'" --agent-type tester > /dev/null || exit 5; done
fi
taskd converge tester-1 tester-2 tester-3 --strategy vote > out.$TASKD_ATTEMPT; echo $? > rc.$TASKD_ATTEMPT`
	h.drop("l", "1", parentTask(script, cwd, nil))
	p := h.waitState("l", "1", task.NeedsHuman, 30*time.Second)
	if rc := strings.TrimSpace(readFile(t, filepath.Join(cwd, "rc.1"))); rc != "3" {
		t.Errorf("taskd converge exit status %s, want 3", rc)
	}
	var conflicts []map[string]any
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(cwd, "out.1"))), &conflicts); err != nil || len(conflicts) != 1 || conflicts[0]["kind"] != "tie" {
		t.Errorf("taskd converge printed %s (%v), want the tie", readFile(t, filepath.Join(cwd, "out.1")), err)
	}
	hitl := p.Metadata.Object("taskd").Object("hitl")
	if s, _ := hitl.String("source"); s != "command" {
		t.Errorf("hitl source %q, want command", s)
	}
	b := h.childNamed("l", "1", "tester-2")
	answer(t, h, "1", b)
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	if rc := strings.TrimSpace(readFile(t, filepath.Join(cwd, "rc.2"))); rc != "0" {
		t.Errorf("second taskd converge exit status %s, want 0", rc)
	}
	var cv convergedFile
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(cwd, "out.2"))), &cv); err != nil || cv.Answer != "b" || cv.Winner != b {
		t.Errorf("output %+v (%v), want answer b from %s", cv, err, b)
	}
	if _, err := os.Stat(filepath.Join(h.listDir("l"), ".taskd", "runs", "1", "2", "converged.json")); err != nil {
		t.Errorf("the output is not in the second attempt's run folder: %v", err)
	}
	evs := h.events("l")
	checkSequence(t, evs, []wantEvent{
		{eventlog.ConvergenceInitiated, "1", map[string]any{"strategy": "vote"}},
		{eventlog.ManualReviewRequired, "1", map[string]any{"conflict_count": 1}},
		{eventlog.TaskNeedsHuman, "1", map[string]any{"kind": "converge"}},
		{eventlog.HumanResolved, "1", map[string]any{"answer": b, "kind": "converge"}},
		{eventlog.ConvergenceComplete, "1", map[string]any{"conflict_count": 1, "resolution_count": 1}},
	})
	for typ, want := range map[string]int{eventlog.ConvergenceInitiated: 1, eventlog.ManualReviewRequired: 1, eventlog.ConvergenceComplete: 1, eventlog.SubagentSpawned: 0} {
		if got := countEvents(evs, typ, "1"); got != want {
			t.Errorf("%d %s events for the parent, want %d", got, typ, want)
		}
	}
}
