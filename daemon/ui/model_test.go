package ui

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/taskfile"
)

var update = flag.Bool("update", false, "rewrite the golden screens in testdata/screens")

// now is the clock of the screens.
var now = time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC)

// fixture copies testdata/root into a new home directory (so that the
// screens show it as ~/root) with every file's time set to ten minutes
// before now, and returns the root.
func fixture(t *testing.T) (root, home string) {
	t.Helper()
	home = t.TempDir()
	root = filepath.Join(home, "root")
	err := filepath.WalkDir("testdata/root", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata/root", path)
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
		return os.Chtimes(dst, now.Add(-10*time.Minute), now.Add(-10*time.Minute))
	})
	if err != nil {
		t.Fatal(err)
	}
	return root, home
}

// testModel is a model of root at w×h, its first snapshot read as the
// feed reads it.
func testModel(t *testing.T, root, home string, w, h int, color bool) *Model {
	t.Helper()
	opt := Options{Root: root, Home: home, Color: color, Now: func() time.Time { return now },
		Daemon: func() Daemon { return Daemon{Running: true, PID: 4242} }}
	r := newReader(opt)
	r.scan()
	m := newModel(opt, nil)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	m.Update(r.snapshot())
	return m
}

// follow sends the model the transcript and the detail of its selected
// task, as the feed reads them.
func follow(m *Model) {
	r := newReader(m.opt)
	r.scan()
	r.follow(m.sel)
	m.Update(r.transcript())
	m.Update(r.describe())
}

// press sends the model keys: names of special keys ("down", "enter"),
// or text typed.
func press(m *Model, keys ...string) tea.Cmd {
	var last tea.Cmd
	for _, k := range keys {
		var msg tea.KeyMsg
		switch k {
		case "up":
			msg = tea.KeyMsg{Type: tea.KeyUp}
		case "down":
			msg = tea.KeyMsg{Type: tea.KeyDown}
		case "left":
			msg = tea.KeyMsg{Type: tea.KeyLeft}
		case "right":
			msg = tea.KeyMsg{Type: tea.KeyRight}
		case "enter":
			msg = tea.KeyMsg{Type: tea.KeyEnter}
		case "esc":
			msg = tea.KeyMsg{Type: tea.KeyEsc}
		case "backspace":
			msg = tea.KeyMsg{Type: tea.KeyBackspace}
		case "ctrl+w":
			msg = tea.KeyMsg{Type: tea.KeyCtrlW}
		case "ctrl+c":
			msg = tea.KeyMsg{Type: tea.KeyCtrlC}
		case "pgdown":
			msg = tea.KeyMsg{Type: tea.KeyPgDown}
		default:
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		}
		_, last = m.Update(msg)
	}
	return last
}

// golden compares the screen with testdata/screens/name.golden.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "screens", name+".golden")
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("screen %s:\n%s\nwant:\n%s", name, got, want)
	}
}

// select moves the cursor to task id of list.
func selectTask(t *testing.T, m *Model, list, id string) {
	t.Helper()
	i, ok := m.index[key{list, id}]
	if !ok {
		t.Fatalf("no row for %s/%s", list, id)
	}
	m.moveTo(i)
}

// TestScreens: the screen of the fixture in an 80×24 terminal with and
// without colour, in a wide one, and with each kind of task selected:
// the marks on every row above a task that needs a person, a running
// agent's progress and cost per minute, a workflow's step, the detail
// of a task that asks about refused calls, of a failed one with a
// worktree, of a paused one, of a list; the help.
func TestScreens(t *testing.T) {
	root, home := fixture(t)
	for _, tt := range []struct {
		name  string
		w, h  int
		color bool
		sel   [2]string
		keys  []string
	}{
		{name: "80x24", w: 80, h: 24},
		{name: "80x24.color", w: 80, h: 24, color: true},
		{name: "wide", w: 160, h: 40, sel: [2]string{"demo", "2"}},
		{name: "needs_human", w: 80, h: 24, sel: [2]string{"demo", "2"}},
		{name: "running", w: 80, h: 24, sel: [2]string{"demo", "3"}},
		{name: "failed", w: 80, h: 24, sel: [2]string{"demo", "4"}},
		{name: "succeeded", w: 100, h: 30, sel: [2]string{"demo", "5"}},
		{name: "paused", w: 80, h: 24, sel: [2]string{"demo", "6"}},
		{name: "held_by_a_pause", w: 80, h: 24, sel: [2]string{"demo", "7"}},
		{name: "hostile", w: 80, h: 24, sel: [2]string{"ops", "10"}},
		{name: "folded", w: 80, h: 24, sel: [2]string{"demo", "1"}, keys: []string{"left"}},
		{name: "scrolled", w: 80, h: 12, keys: []string{"G"}},
		{name: "help", w: 80, h: 24, keys: []string{"?"}},
		{name: "tiny", w: 40, h: 8, sel: [2]string{"demo", "3"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := testModel(t, root, home, tt.w, tt.h, tt.color)
			if tt.sel[0] != "" {
				selectTask(t, m, tt.sel[0], tt.sel[1])
			}
			press(m, tt.keys...)
			follow(m)
			got := m.View()
			for i, line := range strings.Split(got, "\n") {
				if w := visibleWidth(line); w > tt.w {
					t.Errorf("line %d is %d columns wide, more than %d: %q", i+1, w, tt.w, line)
				}
			}
			if n := strings.Count(got, "\n") + 1; n != tt.h {
				t.Errorf("%d lines, want %d", n, tt.h)
			}
			if !tt.color && strings.Contains(got, "\x1b") {
				t.Errorf("an escape sequence without colour: %q", got)
			}
			golden(t, tt.name, got)
		})
	}
}

// visibleWidth is the columns a drawn line takes.
func visibleWidth(s string) int {
	n := 0
	for _, r := range stripANSI(s) {
		if r >= 0x2E80 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// TestMarks: the ! marks the task that needs a person, every task above
// it and its list, and nothing else.
func TestMarks(t *testing.T) {
	root, home := fixture(t)
	m := testModel(t, root, home, 80, 24, false)
	marked := map[key]bool{}
	for _, r := range m.rows {
		if r.person {
			marked[r.key()] = true
		}
	}
	want := map[key]bool{{"demo", ""}: true, {"demo", "1"}: true, {"demo", "2"}: true, {"ops", ""}: true, {"ops", "10"}: true}
	if len(marked) != len(want) {
		t.Errorf("marked %v, want %v", marked, want)
	}
	for k := range want {
		if !marked[k] {
			t.Errorf("%v is not marked", k)
		}
	}
	if !m.nextPerson() || m.sel != (key{"demo", "2"}) {
		t.Errorf("n went to %v, want demo/2", m.sel)
	}
	if !m.nextPerson() || m.sel != (key{"ops", "10"}) {
		t.Errorf("n again went to %v, want ops/10", m.sel)
	}
}

// TestSelectionKept: a new snapshot keeps the selection on its task,
// wherever its row has gone; a task that is gone leaves the cursor where
// it was.
func TestSelectionKept(t *testing.T) {
	root, home := fixture(t)
	m := testModel(t, root, home, 80, 24, false)
	selectTask(t, m, "ops", "10")
	os.Remove(filepath.Join(root, "demo", "7.json"))
	r := newReader(m.opt)
	r.scan()
	m.Update(r.snapshot())
	if m.sel != (key{"ops", "10"}) || m.rows[m.cursor].key() != m.sel {
		t.Errorf("selection %v at row %v after a task above it went", m.sel, m.rows[m.cursor].key())
	}
	os.Remove(filepath.Join(root, "ops", "10.json"))
	r = newReader(m.opt)
	r.scan()
	m.Update(r.snapshot())
	if m.sel == (key{"ops", "10"}) || m.selected() == nil || !m.selected().selectable() {
		t.Errorf("selection %v after its task went", m.sel)
	}
}

// TestAnswer: the answer form of a task that asks about refused calls
// offers its answers, takes a note typed in place (edited with backspace
// and ctrl-w), and answers through control.ResolveNote: the file has the
// answer and the note. Esc leaves the task unanswered.
func TestAnswer(t *testing.T) {
	root, home := fixture(t)
	m := testModel(t, root, home, 80, 24, false)
	selectTask(t, m, "demo", "2")
	press(m, "enter", "esc")
	if m.mode != browsing || readMeta(t, root, "demo", "2", "resolve") != "" {
		t.Fatalf("esc: mode %v, resolve %q", m.mode, readMeta(t, root, "demo", "2", "resolve"))
	}
	press(m, "a")
	if m.mode != answering || m.form.options[m.form.choice] != "allow" {
		t.Fatalf("a: mode %v", m.mode)
	}
	press(m, "Run only the lexer tests, typo", "ctrl+w", "backspace", "backspace", ".")
	golden(t, "answer", m.View())
	cmd := press(m, "enter")
	if cmd == nil {
		t.Fatal("enter gave nothing to run")
	}
	m.Update(cmd())
	if got, want := readMeta(t, root, "demo", "2", "resolve"), "allow"; got != want {
		t.Errorf("resolve = %q, want %q", got, want)
	}
	if got, want := readMeta(t, root, "demo", "2", "resolveNote"), "Run only the lexer tests."; got != want {
		t.Errorf("resolveNote = %q, want %q", got, want)
	}
	if !strings.Contains(m.footer(), "demo/2 answered allow") {
		t.Errorf("footer %q", m.footer())
	}

	// A task that does not wait for a person is not answered.
	selectTask(t, m, "demo", "3")
	press(m, "enter")
	if m.mode != browsing || !strings.Contains(m.msg, "does not wait for an answer") {
		t.Errorf("enter on a running task: mode %v, %q", m.mode, m.msg)
	}
	selectTask(t, m, "ops", "10")
	press(m, "a")
	if m.mode != browsing || !strings.Contains(m.msg, "no refused call") {
		t.Errorf("a on a workflow's question: mode %v, %q", m.mode, m.msg)
	}
}

// readMeta reads metadata.taskd.key of a task file.
func readMeta(t *testing.T, root, list, id, k string) string {
	t.Helper()
	tf, err := taskfile.ReadFile(filepath.Join(root, list, id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := tf.Metadata.Object("taskd").String(k)
	return s
}

// TestActionsAsk: cancel, retry, restart and remove ask first; anything
// but y leaves the task as it was; y acts through package control.
func TestActionsAsk(t *testing.T) {
	root, home := fixture(t)
	m := testModel(t, root, home, 80, 24, false)

	selectTask(t, m, "demo", "1")
	press(m, "c")
	if m.mode != confirming || !strings.Contains(m.footer(), "Cancel demo/1 and the 2 tasks below it?") {
		t.Fatalf("c: mode %v, footer %q", m.mode, m.footer())
	}
	golden(t, "confirm", m.View())
	press(m, "n")
	if cancelled(t, root, "demo", "1") {
		t.Fatalf("n cancelled the task")
	}
	cmd := press(m, "c", "y")
	m.Update(cmd())
	if !cancelled(t, root, "demo", "1") {
		t.Errorf("y did not cancel the task: %s", m.msg)
	}

	// Cancelling an ended task says so and asks nothing.
	selectTask(t, m, "demo", "5")
	press(m, "c")
	if m.mode != browsing || !strings.Contains(m.msg, "has already ended") {
		t.Errorf("c on an ended task: mode %v, %q", m.mode, m.msg)
	}

	selectTask(t, m, "demo", "4")
	m.Update(press(m, "r", "y")())
	if s := readMeta(t, root, "demo", "4", "state"); s != "" || m.msgErr {
		t.Errorf("retry: state %q, %q", s, m.msg)
	}

	selectTask(t, m, "ops", "11")
	m.Update(press(m, "R", "y")())
	if s := readMeta(t, root, "ops", "11", "state"); s != "" || m.msgErr {
		t.Errorf("restart: state %q, %q", s, m.msg)
	}

	selectTask(t, m, "demo", "5")
	press(m, "x")
	if !strings.Contains(m.footer(), "cannot be undone") {
		t.Errorf("x: footer %q", m.footer())
	}
	m.Update(press(m, "y")())
	if _, err := os.Stat(filepath.Join(root, "demo", "5.json")); !os.IsNotExist(err) {
		t.Errorf("x y left the file: %v (%s)", err, m.msg)
	}

	// The pause of the profile that paused a task is lifted, through
	// taskd resume's code: the pause file drops it, the task is due now.
	selectTask(t, m, "demo", "6")
	press(m, "p")
	if !strings.Contains(m.footer(), "Lift the pause of profile claude now?") {
		t.Fatalf("p: footer %q", m.footer())
	}
	m.Update(press(m, "y")())
	if rec, err := pausefile.Read(root); err != nil || len(rec.Profiles) != 0 {
		t.Errorf("after p y the pause file holds %v (%v); %s", rec.Profiles, err, m.msg)
	}
	if got := readMeta(t, root, "demo", "6", "retryAt"); !strings.HasPrefix(got, time.Now().UTC().Format("2006-01-02")) {
		t.Errorf("the paused task is due at %q, want now; %s", got, m.msg)
	}
	if !strings.Contains(m.msg, "profile claude: pause lifted; resume now: demo/6") {
		t.Errorf("p y said %q", m.msg)
	}

	// A running task is asked about again before it is removed.
	selectTask(t, m, "demo", "3")
	m.Update(press(m, "x", "y")())
	if m.mode != confirming || !strings.Contains(m.footer(), "is running. Remove it anyway?") {
		t.Fatalf("removing a running task: mode %v, footer %q", m.mode, m.footer())
	}
	m.Update(press(m, "y")())
	if _, err := os.Stat(filepath.Join(root, "demo", "3.json")); !os.IsNotExist(err) {
		t.Errorf("the running task is still there: %v (%s)", err, m.msg)
	}
}

// cancelled reports whether a task file asks for its cancellation.
func cancelled(t *testing.T, root, list, id string) bool {
	t.Helper()
	tf, err := taskfile.ReadFile(filepath.Join(root, list, id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := tf.Metadata.Object("taskd").Bool("cancel")
	return c
}

// TestQuit: q and ctrl-c quit, also from the answer form (ctrl-c).
func TestQuit(t *testing.T) {
	root, home := fixture(t)
	m := testModel(t, root, home, 80, 24, false)
	for _, keys := range [][]string{{"q"}, {"ctrl+c"}} {
		if cmd := press(m, keys...); cmd == nil || cmd() != tea.Quit() {
			t.Errorf("%v does not quit", keys)
		}
	}
	selectTask(t, m, "demo", "2")
	press(m, "enter")
	if cmd := press(m, "q"); cmd != nil {
		t.Errorf("q in the form quit")
	}
	if cmd := press(m, "ctrl+c"); cmd == nil || cmd() != tea.Quit() {
		t.Errorf("ctrl-c in the form does not quit")
	}
}
