package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/taskd/taskd/daemon/status"
)

// feedRun runs a feed of root until the test ends and returns what it
// sends.
func feedRun(t *testing.T, root string) (*feed, <-chan tea.Msg) {
	t.Helper()
	f := newFeed(Options{Root: root, Now: time.Now})
	msgs := make(chan tea.Msg, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		f.run(ctx, func(m tea.Msg) { msgs <- m })
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return f, msgs
}

// await returns the first message from msgs that ok accepts, failing the
// test after a deadline.
func await[M any](t *testing.T, msgs <-chan tea.Msg, what string, ok func(M) bool) M {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m := <-msgs:
			if v, is := m.(M); is && ok(v) {
				return v
			}
		case <-deadline:
			var zero M
			t.Fatalf("timed out waiting for %s", what)
			return zero
		}
	}
}

// taskOf returns task id of list in snapshot s (nil if it has none).
func taskOf(s *snapshot, list, id string) *status.Task {
	for i := range s.lists {
		if s.lists[i].ID != list {
			continue
		}
		for k := range s.lists[i].Tasks {
			if s.lists[i].Tasks[k].ID == id {
				return &s.lists[i].Tasks[k]
			}
		}
	}
	return nil
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeNewer writes path as the daemon writes a note about file: at
// once, by a rename, and newer than file (its time is set a second after
// file's, not left to the clock's resolution).
func writeNewer(t *testing.T, path, file, data string) {
	t.Helper()
	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	writeFile(t, tmp, data)
	later := info.ModTime().Add(time.Second)
	if err := os.Chtimes(tmp, later, later); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

func taskJSON(id, state string, attempt int, extra string) string {
	return fmt.Sprintf(`{"id": %q, "subject": "task %s", "status": "in_progress", "blocks": [], "blockedBy": [], "owner": "taskd",
	  "metadata": {"taskd": {"state": %q, "attempt": %d, "runDir": ".taskd/runs/%s/%d"%s}}}`, id, id, state, attempt, id, attempt, extra)
}

// TestFeed: with real file events, the feed sends a snapshot when a task
// file is written, when a list appears and when the daemon refuses a
// file; it follows the selected task's transcript as it grows and moves
// on to the next attempt's; Reread reads everything again.
func TestFeed(t *testing.T) {
	root := t.TempDir()
	list := filepath.Join(root, "l")
	writeFile(t, filepath.Join(list, "1.json"), taskJSON("1", "running", 1, ""))
	run1 := filepath.Join(list, ".taskd", "runs", "1", "1")
	writeFile(t, filepath.Join(run1, "stdout.log"), "first line\n")

	f, msgs := feedRun(t, root)
	await(t, msgs, "the first snapshot", func(s *snapshot) bool { return taskOf(s, "l", "1") != nil })

	writeFile(t, filepath.Join(list, "2.json"), taskJSON("2", "needs_human", 1, `, "hitl": {"reason": "why", "options": ["passed"]}`))
	await(t, msgs, "task 2", func(s *snapshot) bool { return taskOf(s, "l", "2") != nil })

	writeFile(t, filepath.Join(root, "m", "5.json"), taskJSON("5", "running", 1, ""))
	await(t, msgs, "list m", func(s *snapshot) bool { return taskOf(s, "m", "5") != nil })

	writeFile(t, filepath.Join(list, "3.json"), `{"id": "3", "subject": "bad agent", "status": "pending", "blocks": [], "blockedBy": [], "owner": "taskd"}`)
	await(t, msgs, "task 3", func(s *snapshot) bool { return taskOf(s, "l", "3") != nil })
	writeNewer(t, filepath.Join(list, ".taskd", "rejected", "3.json.txt"), filepath.Join(list, "3.json"), list+"/3.json: unknown agent \"x\"\n\nHow to fix it: name a profile.\n")
	await(t, msgs, "task 3 rejected", func(s *snapshot) bool { t := taskOf(s, "l", "3"); return t != nil && t.Rejected != "" })

	writeFile(t, filepath.Join(list, "6.json"), `{"id": "6", "subject": "held", "status": "pending", "blocks": [], "blockedBy": [], "owner": "taskd", "metadata": {"taskd": {"agent": "claude"}}}`)
	writeFile(t, filepath.Join(root, ".taskd-pauses.json"), `{"profiles": {"claude": {"reason": "a limit", "by": "usage limit", "agents": ["claude"]}}}`)
	await(t, msgs, "the pause", func(s *snapshot) bool {
		t := taskOf(s, "l", "6")
		return len(s.pauses) == 1 && t != nil && t.Pause != nil && t.Pause.Profile == "claude"
	})
	os.Remove(filepath.Join(root, ".taskd-pauses.json"))
	await(t, msgs, "the pause lifted", func(s *snapshot) bool {
		t := taskOf(s, "l", "6")
		return len(s.pauses) == 0 && t != nil && t.Pause == nil
	})

	f.Follow(key{"l", "1"})
	await(t, msgs, "the transcript", func(m transcriptMsg) bool {
		return m.k == key{"l", "1"} && m.attempt == 1 && strings.Join(m.lines, "|") == "first line"
	})
	appendFile(t, filepath.Join(run1, "stdout.log"), "second line\nthird, not ended")
	await(t, msgs, "the transcript grown", func(m transcriptMsg) bool {
		return strings.Join(m.lines, "|") == "first line|second line|third, not ended"
	})

	writeFile(t, filepath.Join(list, ".taskd", "runs", "1", "2", "stdout.log"), "attempt two\n")
	writeFile(t, filepath.Join(list, "1.json"), taskJSON("1", "running", 2, ""))
	await(t, msgs, "the next attempt's transcript", func(m transcriptMsg) bool {
		return m.attempt == 2 && strings.Join(m.lines, "|") == "attempt two"
	})
	appendFile(t, filepath.Join(list, ".taskd", "runs", "1", "2", "stdout.log"), "more\n")
	await(t, msgs, "the next attempt's transcript grown", func(m transcriptMsg) bool {
		return m.attempt == 2 && strings.Join(m.lines, "|") == "attempt two|more"
	})

	f.Follow(key{"l", ""})
	await(t, msgs, "no transcript", func(m transcriptMsg) bool { return m.k == key{} })

	os.Remove(filepath.Join(list, "2.json"))
	await(t, msgs, "task 2 gone", func(s *snapshot) bool { return taskOf(s, "l", "2") == nil && taskOf(s, "l", "1") != nil })
	f.Reread()
	await(t, msgs, "everything read again", func(s *snapshot) bool { return taskOf(s, "m", "5") != nil })
}

// TestRing: the transcript keeps its last lines, each cut, control
// characters and broken UTF-8 made harmless; a line being written shows.
func TestRing(t *testing.T) {
	r := newRing(3)
	fmt.Fprintf(r, "one\ntwo\n\x1b[2Jthree\nfour\xff\n")
	r.Write([]byte(strings.Repeat("x", 3*lineBytes)))
	r.Write([]byte("\nfive"))
	got := r.lines()
	want := []string{" [2Jthree", "four?", strings.Repeat("x", lineBytes), "five"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", got, want)
	}
	r.reset()
	if got := r.lines(); len(got) != 0 {
		t.Errorf("after reset: %q", got)
	}
}

// TestFeedHostile: a task whose log is a FIFO, or a link to a file
// elsewhere, is followed without waiting on the FIFO and without reading
// through the link; a list whose name holds an escape sequence, and a
// transcript that writes them, reach the screen cleaned; a run folder
// that is a link is not followed.
func TestFeedHostile(t *testing.T) {
	root := t.TempDir()
	list := filepath.Join(root, "l\x1b[2J")
	writeFile(t, filepath.Join(list, "1.json"), taskJSON("1", "running", 1, ""))
	writeFile(t, filepath.Join(list, "2.json"), taskJSON("2", "running", 1, ""))
	writeFile(t, filepath.Join(list, "3.json"), taskJSON("3", "running", 1, ""))
	writeFile(t, filepath.Join(list, "4.json"), taskJSON("4", "running", 1, ""))
	secret := filepath.Join(t.TempDir(), "secret")
	writeFile(t, secret, "SECRET\n")
	run := func(id string) string { return filepath.Join(list, ".taskd", "runs", id, "1") }
	os.MkdirAll(run("1"), 0o700)
	if err := syscall.Mkfifo(filepath.Join(run("1"), "stdout.log"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(run("2"), 0o700)
	os.Symlink(secret, filepath.Join(run("2"), "stdout.log"))
	writeFile(t, filepath.Join(run("3"), "stdout.log"), "\x1b]0;title\x07\x1b[2Jhello\r\n")
	os.MkdirAll(filepath.Dir(run("4")), 0o700)
	os.Symlink(filepath.Dir(secret), run("4"))

	f, msgs := feedRun(t, root)
	s := await(t, msgs, "the first snapshot", func(s *snapshot) bool { return len(s.lists) == 1 })
	for _, id := range []string{"1", "2", "4"} {
		f.Follow(key{s.lists[0].ID, id})
		m := await(t, msgs, "the transcript of "+id, func(m transcriptMsg) bool { return m.k.id == id })
		if len(m.lines) != 0 {
			t.Errorf("task %s: read %q", id, m.lines)
		}
	}
	f.Follow(key{s.lists[0].ID, "3"})
	m := await(t, msgs, "the transcript of 3", func(m transcriptMsg) bool { return m.k.id == "3" })
	if strings.Join(m.lines, "|") != " ]0;title  [2Jhello" {
		t.Errorf("task 3: %q", m.lines)
	}

	opt := Options{Root: root, Now: func() time.Time { return now }}
	model := newModel(opt, nil)
	model.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	model.Update(s)
	selectTask(t, model, s.lists[0].ID, "3")
	model.Update(m)
	if screen := model.View(); strings.ContainsAny(screen, "\x1b\x07\r") {
		t.Errorf("a control character reached the screen:\n%q", screen)
	}
}

// TestFeedRootLater: a root that does not exist when the view starts is
// watched once it does, and its lists shown.
func TestFeedRootLater(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tasks")
	_, msgs := feedRun(t, root)
	await(t, msgs, "the first snapshot", func(s *snapshot) bool { return len(s.lists) == 0 })
	writeFile(t, filepath.Join(root, "l", "1.json"), taskJSON("1", "running", 1, ""))
	await(t, msgs, "the list made after the view started", func(s *snapshot) bool { return taskOf(s, "l", "1") != nil })
	writeFile(t, filepath.Join(root, "l", "2.json"), taskJSON("2", "running", 1, ""))
	await(t, msgs, "a task after that", func(s *snapshot) bool { return taskOf(s, "l", "2") != nil })
}
