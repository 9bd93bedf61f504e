package daemon_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
)

// addCommand writes a command file into a list's .taskd/commands.
func (h *harness) addCommand(list, name, content string) {
	h.t.Helper()
	dir := filepath.Join(h.listDir(list), ".taskd", "commands")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// An until condition needs a model to judge it: on an exec task with no
// judge configured the task is refused when accepted, the reason and the
// fix in rejected/, the file untouched. A task whose own agent reads its
// prompt is judged by that agent.
func TestForms_UntilNeedsAJudge(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		// A stand-in model: as the judge it breaks the loop once two
		// iterations ran; as the worker it appends a line.
		fc.Profiles = map[string]config.ProfileSpec{"model": scriptProfile(t, "model", `if grep -q '<user-condition>' ; then
  if [ "$(wc -l < count)" -ge 2 ]; then echo '<subtask2 loop=break/>'; else echo 'not yet'; fi
else echo x >> count; echo '{"success": true, "summary": "one more"}'; fi`)}
	})
	body := s2Task("/subtask {until:the tests pass && loop:3} make test", t.TempDir(), nil)
	h.drop("l", "1", body)
	note := filepath.Join(h.listDir("l"), ".taskd", "rejected", "1.json.txt")
	h.waitFor("the rejection", 10*time.Second, func() bool { _, err := os.Stat(note); return err == nil })
	text, _ := os.ReadFile(note)
	for _, want := range []string{`the until condition "the tests pass" needs a model to judge it`, `the task's own agent, the "exec" profile, which runs its prompt as a shell script`,
		`"agents": {"judge": "claude"}`, "untilCommand"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("rejection lacks %q:\n%s", want, text)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(h.listDir("l"), "1.json")); string(data) != body {
		t.Errorf("the refused file was changed:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(h.listDir("l"), ".taskd", "runs", "1")); err == nil {
		t.Errorf("the refused task ran")
	}

	cwd := t.TempDir()
	h.drop("l", "2", s2Task("/subtask {until:two lines && loop:5} add a line", cwd, map[string]any{"agent": "model"}))
	tf := h.waitState("l", "2", task.Succeeded, 30*time.Second)
	if exit, _ := tf.Metadata.Object("taskd").String("loopExit"); exit != "satisfied" || lines(t, filepath.Join(cwd, "count")) != "x x" {
		t.Errorf("loopExit %q, count %q: the task's own model did not judge", exit, lines(t, filepath.Join(cwd, "count")))
	}
}

// $RESULT[name] reaches a task's parallel items (named by their command,
// or by their command file's as) — the task's own agent waits for them —
// and the return tasks that follow it.
func TestForms_ParallelResults(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	h.addCommand("l", "plan-a", "echo A-for $ARGUMENTS\n")
	h.addCommand("l", "plan-b", "---\nas: beta\n---\nsleep 0.2; echo B-for $ARGUMENTS\n")
	cwd := t.TempDir()
	h.drop("l", "1", s2Task(`/subtask {parallel:/plan-a the cache || /plan-b the cache && return:echo "then: $RESULT[beta]" > then.txt}
echo "compare: $RESULT[plan-a] / $RESULT[beta]" > compare.txt`, cwd, nil))
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	h.waitLines(filepath.Join(cwd, "then.txt"), "then: B-for the cache", 20*time.Second)
	if got, _ := os.ReadFile(filepath.Join(cwd, "compare.txt")); string(got) != "compare: A-for the cache / B-for the cache\n" {
		t.Errorf("compare.txt = %q", got)
	}
	evs := h.events("l")
	if n := countEvents(evs, eventlog.TaskWaiting, "1"); n != 2 {
		t.Errorf("%d TaskWaiting events for the task, want 2 (it waits for its parallel items before its agent, and for its return chain after)", n)
	}
}

// A name two results go by is never resolved to one of them in silence:
// two parallel items that invoke the same command (each result goes by
// the command's name) may run, but a prompt that names that result fails
// saying it is ambiguous; with an as each, both are found.
func TestForms_AmbiguousResultName(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	h.addCommand("l", "note", "echo note $ARGUMENTS\n")
	cwd := t.TempDir()
	h.drop("l", "1", s2Task(`/subtask {parallel:/note a || /note b}
echo "$RESULT[note]" > one.txt`, cwd, nil))
	tf := h.waitState("l", "1", task.Failed, 30*time.Second)
	if e := tdString(tf, "error"); !strings.Contains(e, "$RESULT[note] is ambiguous") || !strings.Contains(e, "give each its own as") {
		t.Errorf("error = %q, want it to say the name is ambiguous", e)
	}
	if _, err := os.Stat(filepath.Join(cwd, "one.txt")); err == nil {
		t.Errorf("the task's agent ran with one of two results")
	}
	h.drop("l", "2", s2Task(`/subtask {parallel:/note {as:first} a || /note {as:second} b}
echo "$RESULT[first] / $RESULT[second]" > two.txt`, cwd, nil))
	h.waitState("l", "2", task.Succeeded, 30*time.Second)
	if got, _ := os.ReadFile(filepath.Join(cwd, "two.txt")); string(got) != "note a / note b\n" {
		t.Errorf("two.txt = %q", got)
	}
}

// A command's arguments fill $ARGUMENTS in its frontmatter's return and
// parallel items; pipe arguments go to its parallel and return commands.
func TestForms_CommandArguments(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	h.addCommand("l", "note", "echo note $ARGUMENTS >> log\n")
	h.addCommand("l", "ship", "---\nreturn:\n  - echo shipped $ARGUMENTS >> log\n---\necho building $ARGUMENTS >> log\n")
	h.addCommand("l", "fan", "---\nparallel:\n  - /note $ARGUMENTS\n  - /note default\nreturn:\n  - /note $ARGUMENTS\n---\necho main $ARGUMENTS >> log\n")
	shipped, fanned := t.TempDir(), t.TempDir()
	h.drop("l", "1", s2Task("/ship v2", shipped, nil))
	h.drop("l", "2", s2Task("/fan first || second || third", fanned, nil))
	h.waitLines(filepath.Join(shipped, "log"), "building v2 shipped v2", 20*time.Second)
	h.waitFor("four lines", 20*time.Second, func() bool {
		data, _ := os.ReadFile(filepath.Join(fanned, "log"))
		return strings.Count(string(data), "\n") == 4
	})
	data, _ := os.ReadFile(filepath.Join(fanned, "log"))
	got := strings.Split(strings.TrimSpace(string(data)), "\n")
	slices.Sort(got)
	if want := []string{"main first", "note first", "note second", "note third"}; !slices.Equal(got, want) {
		t.Errorf("log = %q, want %q", got, want)
	}
}

// The steps of a planned workflow that name no agent run with the task's
// worker, not with the planner.
func TestForms_AutoPlanRunsWithTheWorker(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) {
		fc.Profiles = map[string]config.ProfileSpec{"planner": scriptProfile(t, "planner", `cat >/dev/null
printf '<subtask2 auto="true">\n/subtask {return:echo R >> f} echo W >> f\n</subtask2>\n'`)}
		fc.Agents = map[string]string{"worker": "exec"}
	})
	cwd := t.TempDir()
	b, _ := json.Marshal(map[string]any{"subject": "auto", "owner": "taskd", "metadata": map[string]any{"taskd": map[string]any{
		"agent": "planner", "cwd": cwd, "prompt": "/subtask {auto:true} write W, then R"}}})
	h.drop("l", "1", string(b))
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	h.waitLines(filepath.Join(cwd, "f"), "W R", 20*time.Second)
	plan := findNamed(t, h, "l", "1-plan")
	var cmd struct{ Profile string }
	json.Unmarshal([]byte(h.runText("l", plan, 1, "cmd.json")), &cmd)
	if cmd.Profile != "exec" {
		t.Errorf("the planned step ran with the %q profile, want the worker's (exec)", cmd.Profile)
	}
}

// $TURN quotes the turns before a task: the steps of its return chain, a
// loop's earlier iterations.
func TestForms_Turns(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"})
	cwd := t.TempDir()
	h.drop("l", "1", s2Task("echo FIRST-OUT", cwd, map[string]any{"return": []string{"echo SECOND-OUT", `printf '%s' "$TURN[2]" > turn.txt`}}))
	h.drop("l", "2", s2Task(`/subtask {loop:2} printf '%s|' "iteration after: $TURN[1]" >> loop.txt; echo LOOP-OUT`, cwd, nil))
	h.waitState("l", findNamed(t, h, "l", "1-r2"), task.Succeeded, 20*time.Second)
	got, _ := os.ReadFile(filepath.Join(cwd, "turn.txt"))
	first, second := strings.Index(string(got), "--- task 1, attempt 1 ---\nFIRST-OUT"), strings.Index(string(got), "SECOND-OUT")
	if first < 0 || second < first {
		t.Errorf("turn.txt = %q, want task 1's turn and then the second step's", got)
	}
	h.waitState("l", "2", task.Succeeded, 20*time.Second)
	loop, _ := os.ReadFile(filepath.Join(cwd, "loop.txt"))
	if want := "iteration after: (no earlier turns)|iteration after: --- this task, attempt 1 ---\nLOOP-OUT|"; string(loop) != want {
		t.Errorf("loop.txt = %q, want %q", loop, want)
	}
}

// A parent resumed with its children's results is told what to do with
// them: the task's genericReturn, else the configuration's.
func TestForms_GenericReturn(t *testing.T) {
	t.Parallel()
	h := startDaemon(t, []string{"l"}, func(fc *config.FileConfig) { fc.GenericReturn = "CFG-RETURN: merge the findings." })
	// The child ends only once its parent waits for it: a parent whose
	// children ended before its agent did is not resumed.
	prompt := func(id string) string {
		file := filepath.Join(h.listDir("l"), id+".json")
		return "/push name=c \"until grep -q '\\\"state\\\": \\\"waiting\\\"' " + file + "; do sleep 0.05; done; echo child\"\n/run\n\necho parent"
	}
	h.drop("l", "1", s2Task(prompt("1"), t.TempDir(), nil))
	h.drop("l", "2", s2Task(prompt("2"), t.TempDir(), map[string]any{"genericReturn": "TASK-RETURN: pick one."}))
	for id, want := range map[string]string{"1": "CFG-RETURN: merge the findings.", "2": "TASK-RETURN: pick one."} {
		h.waitState("l", id, task.Succeeded, 20*time.Second)
		p := h.runText("l", id, 2, "prompt.md")
		if !strings.HasSuffix(strings.TrimSpace(p), want) || !strings.Contains(p, "Results of your child tasks") {
			t.Errorf("task %s: the resumed prompt does not end with %q:\n%s", id, want, p)
		}
	}
}

// Pushed children can run after each other: /push after=NAME (and taskd
// push --after NAME) blocks a child by its sibling; /push seq=true makes it
// a sequential child, run without /run after the earlier ones.
func TestForms_PushAfterAndSeq(t *testing.T) {
	t.Parallel()
	h := startDaemonWithCLI(t, []string{"l"})
	cwd := t.TempDir()
	h.drop("l", "1", s2Task(`/push name=a "sleep 0.3; echo a >> order"
/push name=b after=a "echo b >> order"
/push name=c seq=true "sleep 0.3; echo c >> order"
/push name=d seq=true "echo d >> order"
/run

test "$TASKD_ATTEMPT" -gt 1 || { taskd push name=x 'sleep 0.3; echo x >> order' && taskd push --after x name=y 'echo y >> order' && taskd run; }`, cwd, nil))
	t.Cleanup(func() {
		if t.Failed() {
			h.dump([]string{"l"})
		}
	})
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	got := strings.Fields(lines(t, filepath.Join(cwd, "order")))
	pos := map[string]int{}
	for i, w := range got {
		pos[w] = i + 1
	}
	for _, pair := range [][2]string{{"a", "b"}, {"c", "d"}, {"x", "y"}} {
		if pos[pair[0]] == 0 || pos[pair[1]] <= pos[pair[0]] {
			t.Errorf("order %q: %s did not run before %s", got, pair[0], pair[1])
		}
	}
	b := h.read("l", findNamed(t, h, "l", "b"))
	if a := findNamed(t, h, "l", "a"); len(b.BlockedBy) != 1 || b.BlockedBy[0] != a {
		t.Errorf("b is blocked by %v, want [%s]", b.BlockedBy, a)
	}
	if seq := stringsOf(h.read("l", "1").Metadata.Object("taskd").Object("children"), "done"); len(seq) != 6 {
		t.Errorf("the parent was resumed with %d children, want 6: %v", len(seq), seq)
	}
}
