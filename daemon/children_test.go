package daemon_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// treeScript is an exec agent for one node of a tree: on its first attempt
// it pushes its children (parallel ones started with taskd run, sequential
// ones with --seq) and ends its turn; when resumed it records the results
// it was given in <marks>/<name>.resumed and exits.
func treeScript(marks, name string, parallel, sequential []string) string {
	var b strings.Builder
	b.WriteString(`if [ -n "$TASKD_RESULTS" ]; then printf '%s' "$TASKD_RESULTS" > ` + marks + `/` + name + `.resumed; date +%s%N > ` + marks + `/` + name + `.resumedAt; exit 0; fi` + "\n")
	b.WriteString(`set -e` + "\n")
	for _, c := range parallel {
		b.WriteString(`taskd push name=` + c + ` "` + childScript(marks, c) + `"` + "\n")
	}
	if len(parallel) > 0 {
		b.WriteString("taskd run\n")
	}
	for _, c := range sequential {
		b.WriteString(`taskd push --seq name=` + c + ` "` + childScript(marks, c) + `"` + "\n")
	}
	return b.String()
}

// childScript is a leaf: it records when it finished.
func childScript(marks, name string) string {
	return `sleep 0.2; date +%s%N > ` + marks + `/` + name + `.done; echo '{\"success\": true, \"summary\": \"` + name + ` done\"}'`
}

// TestChildren_ThreeLevelTree runs seed 003's end-to-end case: a root with
// two parallel children, one of which has two sequential children and the
// other one parallel child. Every parent resumes exactly once, after exactly
// its own children, with their results.
func TestChildren_ThreeLevelTree(t *testing.T) {
	t.Parallel()
	h := startDaemonWithCLI(t, []string{"l"})
	marks := t.TempDir()
	// Inner parents are pushed by the root with scripts that push their own
	// children; leaves just finish.
	inner := map[string]string{
		"a": treeScript(marks, "a", nil, []string{"a1", "a2"}),
		"b": treeScript(marks, "b", []string{"b1"}, nil),
	}
	root := `if [ -n "$TASKD_RESULTS" ]; then printf '%s' "$TASKD_RESULTS" > ` + marks + `/root.resumed; exit 0; fi
set -e
cat > ` + marks + `/a.sh <<'EOF'
` + inner["a"] + `
EOF
cat > ` + marks + `/b.sh <<'EOF'
` + inner["b"] + `
EOF
taskd push name=a "sh ` + marks + `/a.sh"
taskd push name=b "sh ` + marks + `/b.sh"
taskd run`
	h.drop("l", "1", execTask("root", root))
	rootTask := h.waitState("l", "1", task.Succeeded, 60*time.Second)

	evs := h.waitEvents("l", eventlog.TaskSucceeded, "1", 1)
	byName := map[string]string{} // child name → id
	for _, id := range mustList(t, h.listDir("l")) {
		tf := h.read("l", id)
		if n, ok := tf.Metadata.Object("taskd").String("name"); ok {
			byName[n] = id
		}
		if s := stateOf(tf); s != task.Succeeded {
			e, _ := tf.Metadata.Object("taskd").String("error")
			t.Errorf("task %s ended %q: %s", id, s, e)
		}
	}
	for _, parent := range []string{"root", "a", "b"} {
		id := byName[parent]
		if parent == "root" {
			id = "1"
		}
		if got := countEvents(evs, eventlog.TaskResumed, id); got != 1 {
			t.Errorf("%s (%s) resumed %d times, want once", parent, id, got)
		}
	}
	own := map[string][]string{"root": {"a", "b"}, "a": {"a1", "a2"}, "b": {"b1"}}
	for parent, kids := range own {
		results, err := os.ReadFile(filepath.Join(marks, parent+".resumed"))
		if err != nil {
			t.Errorf("%s was not resumed with results: %v", parent, err)
			continue
		}
		for _, all := range []string{"a", "b", "a1", "a2", "b1"} {
			header := "### " + all + " (task "
			if got, want := strings.Contains(string(results), header), slices.Contains(kids, all); got != want {
				t.Errorf("%s's results mention %s: %v, want %v\n%s", parent, all, got, want, results)
			}
		}
		if parent != "root" && !strings.Contains(string(results), kids[0]+" done") {
			t.Errorf("%s's results lack the summary of %s:\n%s", parent, kids[0], results)
		}
	}
	// a1 and a2 ran one after another; a resumed after both.
	a1, a2 := readStamp(t, marks, "a1.done"), readStamp(t, marks, "a2.done")
	if a2-a1 < int64(150*time.Millisecond) {
		t.Errorf("sequential children overlapped: a1 at %d, a2 at %d", a1, a2)
	}
	if ra := readStamp(t, marks, "a.resumedAt"); ra < a2 {
		t.Errorf("a resumed before its last child finished")
	}
	if rb := readStamp(t, marks, "b.resumedAt"); rb < readStamp(t, marks, "b1.done") {
		t.Errorf("b resumed before its child finished")
	}
	done := stringsOf(rootTask.Metadata.Object("taskd").Object("children"), "done")
	if len(done) != 2 {
		t.Errorf("root's done children = %v", done)
	}
}

func readStamp(t *testing.T, dir, name string) int64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var n int64
	for _, c := range strings.TrimSpace(string(data)) {
		n = n*10 + int64(c-'0')
	}
	return n
}

func mustList(t *testing.T, dir string) []string {
	d := mustDir(t, dir)
	ids, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func stringsOf(o *taskfile.Object, key string) []string {
	v, _ := o.Get(key)
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

// TestChildren_ReceiveWhileRunning: a parent starts two children and waits
// for both results with taskd receive; it ends with nothing outstanding and
// is not resumed. taskd send reaches a running task; check never blocks.
func TestChildren_ReceiveWhileRunning(t *testing.T) {
	t.Parallel()
	h := startDaemonWithCLI(t, []string{"l"})
	out := filepath.Join(t.TempDir(), "got")
	script := `set -e
taskd check && exit 9 || true
taskd push name=x 'echo X; echo "{\"success\": true, \"summary\": \"x ok\"}"'
taskd push name=y 'exit 3'
taskd run
taskd receive --timeout 30s > ` + out + `
taskd receive --timeout 30s >> ` + out + `
taskd receive --timeout 1s >> ` + out + ` && exit 8 || true`
	h.drop("l", "1", execTask("parent", script))
	tf := h.waitState("l", "1", task.Succeeded, 60*time.Second)
	got, _ := os.ReadFile(out)
	if !strings.Contains(string(got), "(x): succeeded  x ok") || !strings.Contains(string(got), "(y): failed") {
		t.Errorf("received:\n%s", got)
	}
	if countEvents(h.events("l"), eventlog.TaskResumed, "1") != 0 {
		t.Errorf("a parent that received everything was resumed")
	}
	if tf.Metadata.Object("taskd").Object("children") == nil {
		t.Errorf("children not recorded")
	}
}

// TestChildren_EndBeforeParent: a parent starts two children and waits,
// inside its own agent, until both have ended (taskd wait) before it
// exits: its children end first. It is resumed, once, with both results
// (the seed's orchestrator, whose research children ended just before it
// did). A parent that took one result from its inbox (taskd receive) is
// resumed with the other; one that took both is not resumed.
func TestChildren_EndBeforeParent(t *testing.T) {
	t.Parallel()
	// Each parent keeps its slot while it waits: room for their children.
	h := startDaemonWithCLI(t, []string{"l"}, func(fc *config.FileConfig) { fc.Concurrency = 5 })
	marks := t.TempDir()
	parent := func(name string, receive int) string {
		s := `if [ -n "$TASKD_RESULTS" ]; then printf '%s' "$TASKD_RESULTS" > ` + marks + `/` + name + `; exit 0; fi
set -e
a=$(taskd push name=a 'echo "{\"success\": true, \"summary\": \"a found it\"}"')
b=$(taskd push name=b 'echo b failed >&2; exit 4')
taskd run
taskd wait "$TASKD_LIST/$a" "$TASKD_LIST/$b" || true
`
		for range receive {
			s += "taskd receive --timeout 30s >> " + marks + "/" + name + ".received\n"
		}
		return s
	}
	h.drop("l", "1", execTask("orchestrator", parent("1", 0)))
	h.drop("l", "2", execTask("takes one", parent("2", 1)))
	h.drop("l", "3", execTask("takes both", parent("3", 2)))
	for _, id := range []string{"1", "2", "3"} {
		h.waitState("l", id, task.Succeeded, 60*time.Second)
	}
	evs := h.events("l")
	for _, tt := range []struct {
		id      string
		resumed int
	}{{"1", 1}, {"2", 1}, {"3", 0}} {
		if got := countEvents(evs, eventlog.TaskResumed, tt.id); got != tt.resumed {
			t.Errorf("parent %s was resumed %d times, want %d", tt.id, got, tt.resumed)
		}
	}
	for _, id := range []string{"1", "2"} {
		results := readString(marks, id)
		for _, want := range []string{"### a (task ", "): succeeded\n\nSummary: a found it", "### b (task ", "): failed", "exit status 4"} {
			if !strings.Contains(results, want) {
				t.Errorf("parent %s was resumed with results lacking %q:\n%s", id, want, results)
			}
		}
	}
	if readString(marks, "3") != "" {
		t.Errorf("parent 3, which received both results, was given them again")
	}
}
