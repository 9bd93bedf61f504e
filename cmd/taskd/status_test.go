package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/held"
	"github.com/taskd/taskd/daemon/status"
)

// The fixed clock of the status tests: the task files under
// testdata/status/root were written relative to it.
var statusNow = time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)

// Placeholders for the paths status shows: the golden files must not
// depend on where the test runs.
const (
	goldenHome = "/home/alice"
	goldenRoot = goldenHome + "/.claude/tasks"
)

// statusRoot copies testdata/status/root to a new private root and gives
// every task file the same modification time (status shows it for tasks
// that have not started) and every rejection note a later one.
func statusRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "tasks")
	err := filepath.WalkDir("testdata/status/root", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata/status/root", path)
		dst := filepath.Join(root, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			return err
		}
		at := statusNow.Add(-10 * time.Minute)
		if strings.HasSuffix(path, ".txt") {
			at = statusNow.Add(-5 * time.Minute)
		}
		return os.Chtimes(dst, at, at)
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

var statusGoldenTests = []struct {
	name   string
	lists  []string
	all    bool
	daemon daemonState
	shared bool // the root and the first list can be written by their group
}{
	// Plain tasks in every state: pending, blocked, running, succeeded,
	// failed, timed out, cancelled, retrying, a broken file, a file the
	// daemon rejected, one not addressed to taskd (hidden), wide characters.
	{"plain", []string{"plain"}, false, daemonState{}, false},
	// Workflows: running at a step, needs_human at a HITL end and at the
	// loop guard, succeeded, stopped by the hard guard.
	{"flow", []string{"flow"}, false, daemonState{running: true, pid: 4242}, false},
	// A parent waiting for its children, one of which waits for its own.
	{"children", []string{"children"}, false, daemonState{running: true, pid: 4242}, false},
	// A workflow waiting at its fork, one child per branch.
	{"fork", []string{"fork"}, false, daemonState{running: true}, false},
	// Every list, every task.
	{"all", nil, true, daemonState{running: true, pid: 4242}, false},
	// The daemon lock could not be checked.
	{"lockerror", []string{"children"}, false, daemonState{err: "check the daemon lock " + goldenRoot + "/.taskd.lock: operation not supported"}, false},
	// A root and a list the daemon refuses: their group can write to them.
	{"refused", []string{"fork"}, false, daemonState{}, true},
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// Ensure status renders each kind of directory as its golden file, with
// and without colour, in 80 columns. Run with -update to rewrite them.
func TestStatus_golden(t *testing.T) {
	root := statusRoot(t)
	for _, tt := range statusGoldenTests {
		snap, err := snapshot(root, tt.lists, tt.all)
		if err != nil {
			t.Fatalf("%s: snapshot: %v", tt.name, err)
		}
		if tt.shared {
			os.Chmod(root, 0o770)
			os.Chmod(filepath.Join(root, tt.lists[0]), 0o775)
		}
		refused := refusals(root, snap)
		if tt.shared {
			os.Chmod(root, 0o700)
			os.Chmod(filepath.Join(root, tt.lists[0]), 0o700)
		}
		for _, color := range []bool{false, true} {
			name := tt.name
			if color {
				name += ".color"
			}
			t.Run(name, func(t *testing.T) {
				v := &statusView{root: goldenRoot, home: goldenHome, daemon: tt.daemon, lists: snap, refused: refused, now: statusNow, width: 80, color: color}
				var out bytes.Buffer
				v.render(&out)
				checkGolden(t, filepath.Join("testdata", "status", name+".golden"), out.Bytes())
				checkStatusText(t, out.String(), color)
			})
		}
	}
}

// Ensure an empty root, and one that does not exist yet, say how to add a
// task.
func TestStatus_noLists(t *testing.T) {
	for _, root := range []string{t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
		snap, err := snapshot(root, nil, false)
		if err != nil {
			t.Fatalf("snapshot(%s): %v", root, err)
		}
		v := &statusView{root: goldenRoot, home: goldenHome, lists: snap, now: statusNow, width: 80}
		var out bytes.Buffer
		v.render(&out)
		checkGolden(t, filepath.Join("testdata", "status", "empty.golden"), out.Bytes())
		checkStatusText(t, out.String(), false)
	}
}

// checkStatusText checks what holds for every rendering: no line is wider
// than 80 columns, and colour is there exactly when asked for.
func checkStatusText(t *testing.T, text string, color bool) {
	t.Helper()
	if got, want := strings.Contains(text, "\x1b["), color; got != want {
		t.Errorf("escape sequences present = %v, want %v", got, want)
	}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		plain := ansi.ReplaceAllString(line, "")
		if strings.ContainsRune(plain, '\x1b') {
			t.Errorf("line %d has a stray escape: %q", i+1, line)
		}
		if w := width(plain); w > 80 {
			t.Errorf("line %d is %d columns wide, want at most 80:\n%s", i+1, w, plain)
		}
	}
}

// checkGolden compares got with the golden file at path, or rewrites the
// file with -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update if the change is intended):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// Ensure the colour golden files are the plain ones plus escape sequences.
func TestStatus_colorOnlyDecorates(t *testing.T) {
	for _, tt := range statusGoldenTests {
		plain, err1 := os.ReadFile(filepath.Join("testdata", "status", tt.name+".golden"))
		color, err2 := os.ReadFile(filepath.Join("testdata", "status", tt.name+".color.golden"))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if got, want := ansi.ReplaceAllString(string(color), ""), string(plain); got != want {
			t.Errorf("%s: colour golden without its escapes differs from the plain one", tt.name)
		}
	}
}

// Ensure status --json describes every task with the fields scripts read.
func TestStatus_json(t *testing.T) {
	root := statusRoot(t)
	out, errOut, code := runCLI(t, "status", "--root", root, "--json", "--all")
	if code != 0 {
		t.Fatalf("status --json: exit %d: %s", code, errOut)
	}
	var lists []status.List
	if err := json.Unmarshal([]byte(out), &lists); err != nil {
		t.Fatalf("status --json is not a JSON array of lists: %v\n%s", err, out)
	}
	byRef := map[string]status.Task{}
	var ids []string
	for _, l := range lists {
		ids = append(ids, l.ID)
		for _, ts := range l.Tasks {
			if ts.List != l.ID {
				t.Errorf("task %s/%s has list %q", l.ID, ts.ID, ts.List)
			}
			byRef[l.ID+"/"+ts.ID] = ts
		}
	}
	if got, want := strings.Join(ids, " "), "children flow fork plain"; got != want {
		t.Errorf("lists = %q, want %q", got, want)
	}
	if got, want := len(byRef), 31; got != want {
		t.Errorf("%d tasks, want %d", got, want)
	}
	tests := []struct {
		ref, field string
		got, want  any
	}{
		{"plain/2", "blockedBy", fmt.Sprint(byRef["plain/2"].BlockedBy), "[1]"},
		{"plain/3", "state", byRef["plain/3"].State, "running"},
		{"plain/3", "since", byRef["plain/3"].Since.Equal(statusNow.Add(-2 * time.Minute)), true},
		{"plain/5", "error", byRef["plain/5"].Error, "the agent failed (exit status 2); logs: " + goldenRoot + "/plain/.taskd/runs/5/2"},
		{"plain/5", "attempt", byRef["plain/5"].Attempt, 2},
		{"plain/9", "rejected", strings.HasPrefix(byRef["plain/9"].Rejected, "invalid JSON"), true},
		{"plain/9", "fix", byRef["plain/9"].Fix != "", true},
		{"plain/10", "rejected", strings.HasPrefix(byRef["plain/10"].Rejected, `unknown agent "gpt-5"`), true},
		{"plain/10", "fix", byRef["plain/10"].Fix, "Set metadata.taskd.agent to a profile or an agent mapped in the configuration file."},
		{"plain/11", "taskd", byRef["plain/11"].Taskd, false},
		{"plain/13", "cwd", byRef["plain/13"].Cwd, "/home/alice/src/app"},
		{"plain/13", "worktree", fmt.Sprint(byRef["plain/13"].Worktree), "&{/home/alice/src/app /home/alice/.claude/tasks/plain/.taskd/worktrees/13 taskd/plain-13 /home/alice/.claude/tasks/plain/.taskd/worktrees/13   0 0 0}"},
		{"plain/15", "worktree commit", byRef["plain/15"].Worktree.Commit, "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d"},
		{"plain/15", "worktree diffstat", fmt.Sprint(byRef["plain/15"].Worktree.FilesChanged, byRef["plain/15"].Worktree.Insertions, byRef["plain/15"].Worktree.Deletions), "3 42 7"},
		{"plain/13", "progress", fmt.Sprint(byRef["plain/13"].Progress), "&{1 3 Edit src/login_test.go 12300 0.0412 true}"},
		{"plain/13", "logs", byRef["plain/13"].Logs, filepath.Join(root, "plain", ".taskd", "runs", "13", "1")},
		{"plain/14", "state", byRef["plain/14"].State, "paused"},
		{"plain/14", "resumesAt", byRef["plain/14"].ResumesAt.Equal(time.Date(2026, 3, 14, 20, 0, 0, 0, time.UTC)), true},
		{"plain/14", "pausedBy", byRef["plain/14"].PausedBy, "You've hit your limit · resets 8pm (Europe/Lisbon)"},
		{"plain/16", "options", fmt.Sprint(byRef["plain/16"].Options), "[allow allow-tool retry fail leave]"},
		{"plain/16", "grants", fmt.Sprint(byRef["plain/16"].Grants), "map[allow:[Bash(python3 test_calc.py)] allow-tool:[Bash]]"},
		{"flow/1", "workflow", byRef["flow/1"].Workflow, "feature-development"},
		{"flow/1", "step", byRef["flow/1"].Step, "implement"},
		{"flow/2", "state", byRef["flow/2"].State, "needs_human"},
		{"flow/2", "options", fmt.Sprint(byRef["flow/2"].Options), "[passed failed leave]"},
		{"flow/2", "waitingFor", strings.HasPrefix(byRef["flow/2"].WaitingFor, "max retries exceeded at verify"), true},
		{"flow/3", "options", fmt.Sprint(byRef["flow/3"].Options), "[continue abort investigate]"},
		{"children/1", "children", fmt.Sprint(byRef["children/1"].Children), "[2 3 4]"},
		{"children/3", "children", fmt.Sprint(byRef["children/3"].Children), "[5 6]"},
		{"children/5", "parent", byRef["children/5"].Parent, "3"},
		{"fork/1", "children", fmt.Sprint(byRef["fork/1"].Children), "[2 3 4]"},
		{"fork/4", "parent", byRef["fork/4"].Parent, "1"},
		{"fork/4", "state", byRef["fork/4"].State, "failed"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s %s = %v, want %v", tt.ref, tt.field, tt.got, tt.want)
		}
	}

	// Without --all, the task not addressed to taskd is counted, not shown.
	out, _, _ = runCLI(t, "status", "--root", root, "--json", "--list", "plain")
	lists = nil
	if err := json.Unmarshal([]byte(out), &lists); err != nil || len(lists) != 1 {
		t.Fatalf("status --json --list plain: %v\n%s", err, out)
	}
	if got, want := lists[0].Hidden, 1; got != want {
		t.Errorf("hidden = %d, want %d", got, want)
	}
}

// Ensure the command reads the real root: colour by flag, the daemon's
// lock, and its errors.
func TestStatus_command(t *testing.T) {
	root := statusRoot(t)
	t.Setenv("NO_COLOR", "")

	out, _, code := runCLI(t, "status", "--root", root, "--list", "fork")
	if code != 0 || strings.Contains(out, "\x1b[") || !strings.Contains(out, "no daemon running") {
		t.Errorf("status: exit %d, want no colour (not a terminal) and no daemon:\n%s", code, out)
	}
	out, _, _ = runCLI(t, "status", "--root", root, "--list", "fork", "--color", "always")
	if !strings.Contains(out, "\x1b[") {
		t.Errorf("status --color always: no colour:\n%s", out)
	}

	lock := flock.New(daemon.LockFile(root))
	if ok, err := lock.TryLock(); !ok || err != nil {
		t.Fatalf("lock: %v %v", ok, err)
	}
	defer lock.Unlock()
	if err := os.WriteFile(daemon.LockFile(root), []byte("4242\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, _ = runCLI(t, "status", "--root", root, "--list", "fork")
	if !strings.Contains(out, "· daemon running (pid 4242)") {
		t.Errorf("status with the lock held: want the daemon's pid:\n%s", out)
	}

	tests := []struct {
		args    []string
		code    int
		message string
	}{
		{[]string{"--list", "nope"}, 1, `no list "nope" in`},
		{[]string{"--color", "pink"}, 2, `bad --color "pink"`},
		{[]string{"fork/1", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"extra"}, 1, `no list in`},
	}
	for _, tt := range tests {
		_, errOut, code := runCLI(t, append([]string{"status", "--root", root}, tt.args...)...)
		if code != tt.code || !strings.Contains(errOut, tt.message) {
			t.Errorf("status %q: exit %d, %q; want exit %d and %q", tt.args, code, errOut, tt.code, tt.message)
		}
	}
}

// BenchmarkStatus measures taskd status on a list of 10,000 tasks, a tenth
// of them children: reading every file once, and drawing the tree.
func BenchmarkStatus(b *testing.B) {
	root := b.TempDir()
	list := filepath.Join(root, "big")
	if err := os.Mkdir(list, 0o700); err != nil {
		b.Fatal(err)
	}
	for i := 1; i <= 10000; i++ {
		parent := ""
		if i%10 == 0 {
			parent = fmt.Sprintf(`, "parent": "%d"`, i-1)
		}
		data := fmt.Sprintf(`{"id": "%d", "subject": "Task number %d", "description": "do it", "activeForm": "Doing it",
  "status": "completed", "owner": "taskd", "blocks": [], "blockedBy": ["%d"],
  "metadata": {"taskd": {"state": "succeeded", "attempt": 1, "startedAt": "2026-03-14T14:00:00Z", "finishedAt": "2026-03-14T14:01:00Z"%s}}}`,
			i, i, i-1, parent)
		if err := os.WriteFile(filepath.Join(list, fmt.Sprintf("%d.json", i)), []byte(data), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		snap, err := snapshot(root, nil, false)
		if err != nil {
			b.Fatal(err)
		}
		v := &statusView{root: root, lists: snap, now: statusNow, width: 80}
		var out bytes.Buffer
		v.render(&out)
	}
}

// Ensure a task the daemon holds is shown held, with why and when it is
// tried again, and each task above it is marked with it (below:), up to
// the top of the tree.
func TestStatus_heldMarksThePath(t *testing.T) {
	root := statusRoot(t)
	snap, err := snapshot(root, []string{"children"}, false)
	if err != nil {
		t.Fatal(err)
	}
	reason := "write /home/alice/.claude/tasks/children/.6.json123: no space left on device"
	status.Attend(snap, []held.Task{{List: "children", ID: "6", Reason: reason, Since: statusNow.Add(-time.Minute), Retry: statusNow.Add(8 * time.Second), Tries: 3}})
	v := &statusView{root: goldenRoot, home: goldenHome, daemon: daemonState{running: true}, lists: snap, now: statusNow, width: 80}
	var out bytes.Buffer
	v.render(&out)
	got := out.String()
	checkStatusText(t, got, false)
	for _, want := range []string{
		"│ └ 6      held ",
		"held: write ~/.claude/tasks/children/.6.json123: no space left on",
		"tries again in 8s; no agent starts meanwhile",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("status lacks %q:\n%s", want, got)
		}
	}
	// Both tasks above 6 (3, its parent, and 1, the top) say so.
	if n := strings.Count(got, "below: 6 is held"); n != 2 {
		t.Errorf("%d tasks are marked with the held task below them, want 2:\n%s", n, got)
	}
}
