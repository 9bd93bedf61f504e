package daemon_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/waitfor"
	"github.com/taskd/taskd/taskfile"
)

// corpusDir is the bad-input corpus (its README describes the format).
const corpusDir = "../testdata/bad"

// A corpusCase is one input of the corpus and what must become of it.
type corpusCase struct {
	name   string   // the task id and file stem
	json   []byte   // the file's bytes, or nil for a generated input
	gen    []string // the generator and its arguments
	expect string   // rejected, ends, not-served, read-refused
	arg    string   // the rest of the expectation line
	want   []string // phrases the message must contain
}

func loadCorpus(t *testing.T) []corpusCase {
	t.Helper()
	wants, err := filepath.Glob(filepath.Join(corpusDir, "*.want"))
	if err != nil || len(wants) == 0 {
		t.Fatalf("no cases in %s (%v)", corpusDir, err)
	}
	var cases []corpusCase
	for _, w := range wants {
		name := strings.TrimSuffix(filepath.Base(w), ".want")
		text, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
		c := corpusCase{name: name}
		c.expect, c.arg, _ = strings.Cut(lines[0], " ")
		c.want = lines[1:]
		if data, err := os.ReadFile(filepath.Join(corpusDir, name+".json")); err == nil {
			c.json = data
		} else if gen, err := os.ReadFile(filepath.Join(corpusDir, name+".gen")); err == nil {
			c.gen = strings.Fields(string(gen))
		} else {
			t.Fatalf("case %s has neither %s.json nor %s.gen", name, name, name)
		}
		switch c.expect {
		case "rejected", "ends", "not-served", "read-refused":
		default:
			t.Fatalf("case %s: unknown expectation %q", name, lines[0])
		}
		cases = append(cases, c)
	}
	return cases
}

// corpusEnv is where a case's input is made.
type corpusEnv struct {
	t       *testing.T
	h       *harness
	list    string // the list the cases go into
	outside string // a directory outside the root
	sandbox string // the cwd of tasks that need one
	keep    []func()
}

// make creates case c's input in the list.
func (env *corpusEnv) make(c corpusCase) error {
	path := filepath.Join(env.h.listDir(env.list), c.name+".json")
	if c.json != nil {
		data := bytes.ReplaceAll(c.json, []byte("SANDBOX"), []byte(env.sandbox))
		return os.WriteFile(path, data, 0o644)
	}
	n := 0
	if len(c.gen) > 1 {
		n, _ = strconv.Atoi(c.gen[1])
	}
	switch c.gen[0] {
	case "invalid-utf8":
		return os.WriteFile(path, []byte("{\"owner\": \"taskd\", \"subject\": \"caf\xe9 \xff\xfe\"}"), 0o644)
	case "binary":
		b := make([]byte, n)
		rand.Read(b)
		b[0] = 0 // never accidentally JSON
		return os.WriteFile(path, b, 0o644)
	case "nul-in-string":
		return os.WriteFile(path, []byte("{\"owner\": \"taskd\", \"subject\": \"a\x00b\"}"), 0o644)
	case "nested":
		return os.WriteFile(path, []byte(`{"owner": "taskd", "x": `+strings.Repeat("[", n)+strings.Repeat("]", n)+`}`), 0o644)
	case "pad":
		head := `{"owner": "taskd", "pad": "`
		return os.WriteFile(path, []byte(head+strings.Repeat("x", n-len(head)-2)+`"}`), 0o644)
	case "sparse":
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		f.WriteString(`{"owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "touch ` + env.outside + `/sparse-ran"}}, "pad": "`)
		if err := f.Truncate(int64(n)); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	case "symlink-out":
		target := filepath.Join(env.outside, c.name+".json")
		content := `{"owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "touch ` + env.outside + `/symlink-ran"}}}`
		if err := os.WriteFile(target, []byte(content), 0o644); err != nil {
			return err
		}
		return os.Symlink(target, path)
	case "symlink-in":
		return os.Symlink("good.json", path)
	case "fifo":
		return syscall.Mkfifo(path, 0o644)
	case "dir":
		return os.Mkdir(path, 0o755)
	case "socket":
		l, err := net.Listen("unix", path)
		if err != nil {
			return err
		}
		l.(*net.UnixListener).SetUnlinkOnClose(false)
		env.keep = append(env.keep, func() { l.Close() })
		return nil
	case "lines":
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, ": line %d\n", i)
		}
		return os.WriteFile(path, []byte(execTask("a prompt of many lines", b.String())), 0o644)
	case "list-file":
		return nil // made once the list is served; see the test
	}
	return fmt.Errorf("unknown generator %q", c.gen[0])
}

// describe summarises a path without following links or reading more than
// a task file's worth of it: what "unchanged" is checked against.
func describe(t *testing.T, p string) string {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		return "missing: " + err.Error()
	}
	st := fi.Sys().(*syscall.Stat_t)
	s := fmt.Sprintf("%s size %d ino %d mtime %s", fi.Mode(), fi.Size(), st.Ino, fi.ModTime())
	if fi.Mode().IsRegular() && fi.Size() <= 2<<20 {
		data, _ := os.ReadFile(p)
		s += " " + string(data)
	}
	return s
}

// TestBadInputCorpus drops every case of testdata/bad into a running
// daemon: each bad file is rejected with its message and left unchanged,
// extreme but valid inputs are handled, and the daemon serves good tasks
// before, during and after.
func TestBadInputCorpus(t *testing.T) {
	t.Parallel()
	cases := loadCorpus(t)
	if len(cases) < 30 {
		t.Errorf("the corpus has %d cases, want at least 30", len(cases))
	}
	h := startDaemon(t, []string{"l", "doomed"})
	base := t.TempDir()
	env := &corpusEnv{t: t, h: h, list: "l", outside: filepath.Join(base, "outside"), sandbox: filepath.Join(base, "sandbox")}
	os.Mkdir(env.outside, 0o755)
	os.Mkdir(env.sandbox, 0o755)
	const secret = "the secret outside every root"
	os.WriteFile(filepath.Join(env.outside, "secret.txt"), []byte(secret+"\n"), 0o644)
	defer func() {
		for _, f := range env.keep {
			f()
		}
	}()
	dir := h.listDir("l")
	wfDir := filepath.Join(dir, ".taskd", "workflows")
	os.MkdirAll(wfDir, 0o755)
	wfs, _ := filepath.Glob(filepath.Join(corpusDir, "workflows", "*.json"))
	for _, wf := range wfs {
		data, _ := os.ReadFile(wf)
		os.WriteFile(filepath.Join(wfDir, filepath.Base(wf)), data, 0o644)
	}

	h.drop("l", "good", execTask("good before", "true"))
	h.waitState("l", "good", task.Succeeded, 30*time.Second)
	h.drop("doomed", "1", execTask("in a list about to go", "true"))
	h.waitState("doomed", "1", task.Succeeded, 30*time.Second)

	before := map[string]string{}
	for _, c := range cases {
		if err := env.make(c); err != nil {
			t.Fatalf("make %s: %v", c.name, err)
		}
		before[c.name] = describe(t, filepath.Join(dir, c.name+".json"))
	}
	outsideBefore := describe(t, filepath.Join(env.outside, "symlink-out-of-root.json"))
	// A list directory replaced by a file while it is served.
	doomed := h.listDir("doomed")
	if err := os.RemoveAll(doomed); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doomed, []byte("not a list\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doomedBefore := describe(t, doomed)

	h.drop("l", "good-during", execTask("good during", "true"))
	h.waitState("l", "good-during", task.Succeeded, 30*time.Second)

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".json")
			switch c.expect {
			case "rejected":
				text := waitRejection(t, h, "l", c.name)
				for _, w := range c.want {
					if !strings.Contains(text, w) {
						t.Errorf("rejection says\n%s\nwant it to contain %q", text, w)
					}
				}
				if !strings.Contains(text, "How to fix it: ") {
					t.Errorf("rejection gives no fix:\n%s", text)
				}
				// The note is written before the event is logged.
				waitUntil(t, h, "the TaskRejected event of "+c.name, 10*time.Second, func() bool {
					return countEvents(h.events("l"), eventlog.TaskRejected, c.name) >= 1
				})
				if got, want := countEvents(h.events("l"), eventlog.TaskRejected, c.name), 1; got != want {
					t.Errorf("%d TaskRejected events, want %d", got, want)
				}
				if got, want := describe(t, path), before[c.name]; got != want {
					t.Errorf("file modified:\nbefore %.300s\nafter  %.300s", want, got)
				}
			case "ends":
				waitUntil(t, h, "task "+c.name+" to be "+c.arg, 60*time.Second, func() bool {
					tf, err := readTask(h, "l", c.name)
					return err == nil && stateOf(tf) == task.State(c.arg)
				})
			case "not-served":
				// Each phrase may list alternatives, "a | b": which one the
				// daemon logs depends on whether it sees the directory go
				// before or after the file appears.
				waitUntil(t, h, "the log to say "+strings.Join(c.want, "; "), 30*time.Second, func() bool {
					for _, w := range c.want {
						if !slices.ContainsFunc(strings.Split(w, " | "), func(alt string) bool { return strings.Contains(h.logs.String(), alt) }) {
							return false
						}
					}
					return true
				})
				if got, want := describe(t, doomed), doomedBefore; got != want {
					t.Errorf("the file that replaced the list was modified:\nbefore %s\nafter  %s", want, got)
				}
			case "read-refused":
				checkReadRefused(t, h, env, c, secret)
			}
		})
	}
	if got, want := describe(t, filepath.Join(env.outside, "symlink-out-of-root.json")), outsideBefore; got != want {
		t.Errorf("the symlink's target outside the root was modified:\nbefore %s\nafter  %s", want, got)
	}
	for _, mark := range []string{"symlink-ran", "sparse-ran"} {
		if _, err := os.Stat(filepath.Join(env.outside, mark)); err == nil {
			t.Errorf("a rejected task ran (%s)", mark)
		}
	}

	// Still serving, after all of it.
	h.drop("l", "good-after", execTask("good after", "true"))
	h.waitState("l", "good-after", task.Succeeded, 30*time.Second)
}

// waitRejection waits for the rejection report of task id and returns it.
func waitRejection(t *testing.T, h *harness, list, id string) string {
	t.Helper()
	path := filepath.Join(h.listDir(list), ".taskd", "rejected", id+".json.txt")
	var text []byte
	waitUntil(t, h, "rejection of "+id, 30*time.Second, func() bool {
		var err error
		text, err = os.ReadFile(path)
		return err == nil
	})
	return string(text)
}

// checkReadRefused checks a task whose /read names a file outside the
// allowed roots. The file's content must never reach a file of the list,
// and taskd must say that it refused the path (in a rejection, the task's
// error or the attempt's transcript).
func checkReadRefused(t *testing.T, h *harness, env *corpusEnv, c corpusCase, secret string) {
	var msg string
	waitUntil(t, h, "case "+c.name+" to end", 60*time.Second, func() bool {
		if data, err := os.ReadFile(filepath.Join(h.listDir(env.list), ".taskd", "rejected", c.name+".json.txt")); err == nil {
			msg = string(data)
			return true
		}
		tf, err := readTask(h, env.list, c.name)
		if err != nil {
			return false
		}
		switch stateOf(tf) {
		case task.Succeeded, task.Failed:
			msg, _ = tf.Metadata.Object("taskd").String("error")
			transcript, _ := os.ReadFile(filepath.Join(h.listDir(env.list), ".taskd", "runs", c.name, "1", "transcript.json"))
			msg += "\n" + string(transcript)
			return true
		}
		return false
	})
	filepath.Walk(h.listDir(env.list), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && fi.Size() < 4<<20 {
			if data, _ := os.ReadFile(p); bytes.Contains(data, []byte(secret)) {
				t.Errorf("the content of a file outside the roots reached %s", p)
			}
		}
		return nil
	})
	refused := true
	for _, w := range c.want {
		refused = refused && strings.Contains(msg, w)
	}
	refused = refused && (strings.Contains(msg, "outside") || strings.Contains(msg, "escape") || strings.Contains(msg, "not allowed") || strings.Contains(msg, "allowed roots"))
	if !refused {
		t.Errorf("taskd did not say it refused %s; it said %q", strings.Join(c.want, ", "), msg)
	}
}

// waitUntil is harness.waitFor for subtests: it fails t, not the test that
// started the daemon.
func waitUntil(t *testing.T, h *harness, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	if !waitfor.WithinEvery(timeout, 5*time.Millisecond, cond) {
		t.Fatalf("timed out after %s waiting for %s\ndaemon log:\n%s", timeout, what, h.logs)
	}
}

func readTask(h *harness, list, id string) (*taskfile.Task, error) {
	return taskfile.ReadFile(filepath.Join(h.listDir(list), id+".json"))
}
