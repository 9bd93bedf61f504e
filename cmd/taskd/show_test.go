package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/held"
	"github.com/taskd/taskd/daemon/status"
)

// showRoot copies testdata/show/root to a new private root.
func showRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "tasks")
	err := filepath.WalkDir("testdata/show/root", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata/show/root", path)
		dst := filepath.Join(root, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// relocate moves the paths of d from the root at from to the root at to,
// so that golden files do not depend on where the test runs.
func relocate(d *status.Detail, from, to string) {
	move := func(p *string) {
		if rest, ok := strings.CutPrefix(*p, from); ok {
			*p = to + rest
		}
	}
	move(&d.File)
	move(&d.Logs)
	if d.Output != nil {
		move(&d.Output.File)
	}
}

var showGoldenTests = []struct {
	name, list, id string
	color          bool
}{
	// Succeeded on its second attempt, in a worktree whose work is
	// committed: summary, usage of the last and of all attempts, the
	// branch and its diffstat, the last 10 lines of a long transcript.
	{"succeeded", "demo", "7", false},
	{"succeeded.color", "demo", "7", true},
	// Failed with nothing on standard output: the reason, the command that
	// retries, standard error's last lines.
	{"failed", "demo", "8", false},
	// Waits for a person after denied tools: why, and the answers.
	{"needs_human", "demo", "9", false},
	{"needs_human.color", "demo", "9", true},
	// Running: its progress so far.
	{"running", "demo", "10", false},
	// A parent waiting for its children, each with how it ended.
	{"parent", "demo", "11", false},
	{"parent.color", "demo", "11", true},
	// Escape sequences and wide characters from the task and its agent.
	{"hostile", "demo", "16", false},
	// A workflow: its steps' attempts added up.
	{"workflow", "demo", "17", false},
	// A Claude Code session's task run in the home directory, and why.
	{"session", "0df8413f-f2c4-4bbb-8f31-6c13e4c6364e", "1", false},
}

// Ensure show renders each kind of task as its golden file, in 80
// columns. Run with -update to rewrite them.
func TestShow_golden(t *testing.T) {
	root := showRoot(t)
	for _, tt := range showGoldenTests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := status.Show(root, tt.list, tt.id, status.ShowOptions{Lines: 10})
			if err != nil {
				t.Fatal(err)
			}
			relocate(d, root, goldenRoot)
			v := &showView{d: d, home: goldenHome, now: statusNow, width: 80, color: tt.color}
			var out bytes.Buffer
			v.render(&out)
			checkGolden(t, filepath.Join("testdata", "show", tt.name+".golden"), out.Bytes())
			checkStatusText(t, out.String(), tt.color)
		})
	}
}

// Ensure show --json is the Detail, as its golden file (the contract of
// anything that reads it), and that the command finds tasks as the other
// commands do.
func TestShow_json(t *testing.T) {
	root := showRoot(t)
	d, err := status.Show(root, "demo", "7", status.ShowOptions{Lines: 3})
	if err != nil {
		t.Fatal(err)
	}
	relocate(d, root, goldenRoot)
	var out bytes.Buffer
	writeJSON(&out, d)
	checkGolden(t, filepath.Join("testdata", "show", "succeeded.json.golden"), out.Bytes())

	for _, ref := range []string{"demo/7", "7", filepath.Join(root, "demo", "7.json")} {
		got, errOut, code := runCLI(t, "show", "--root", root, "--json", "-n", "3", ref)
		var back status.Detail
		if err := json.Unmarshal([]byte(got), &back); code != 0 || err != nil || back.ID != "7" || back.Summary != d.Summary || len(back.Output.Lines) != 3 {
			t.Errorf("show --json %s: exit %d, %v, %s\n%s", ref, code, err, errOut, got)
		}
	}
}

// Ensure show refuses what is not a task, and never blocks on or follows
// what a run folder holds instead of its files.
func TestShow_errorsAndAttacks(t *testing.T) {
	root := showRoot(t)
	for _, tt := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"demo/99"}, 1, "no task demo/99"},
		{[]string{"nolist/1"}, 1, `no list "nolist"`},
		{[]string{"demo/../x"}, 1, "not a task id"},
		{[]string{}, 2, "name one task"},
		{[]string{"demo/7", "demo/8"}, 2, "name one task"},
	} {
		_, errOut, code := runCLI(t, append([]string{"show", "--root", root}, tt.args...)...)
		if code != tt.code || !strings.Contains(errOut, tt.err) {
			t.Errorf("show %v: exit %d, %q; want %d and %q", tt.args, code, errOut, tt.code, tt.err)
		}
	}

	// The transcript a FIFO, the result a link to a file elsewhere, the
	// standard output a link: nothing is read through them, nothing waits.
	run := filepath.Join(root, "demo", ".taskd", "runs", "7", "2")
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte(`{"costUsd": 86421357, "turns": 86421357}`+"\nSECRET\n"), 0o600)
	for name, make := range map[string]func(string) error{
		"transcript.log": func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"result.json":    func(p string) error { return os.Symlink(secret, p) },
		"stdout.log":     func(p string) error { return os.Symlink(secret, p) },
	} {
		p := filepath.Join(run, name)
		os.Remove(p)
		if err := make(p); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	var out, errOut string
	var code int
	go func() {
		defer close(done)
		out, errOut, code = runCLI(t, "show", "--root", root, "--json", "demo/7")
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("show blocked on a FIFO in the run folder")
	}
	var d status.Detail
	if err := json.Unmarshal([]byte(out), &d); code != 0 || err != nil {
		t.Fatalf("show: exit %d, %v, %s", code, err, errOut)
	}
	if strings.Contains(out, "SECRET") || strings.Contains(out, "86421357") {
		t.Errorf("show read through a link:\n%s", out)
	}
	if d.Summary == "" || d.Output != nil {
		t.Errorf("show: summary %q, output %+v; want the summary from the task file, no output", d.Summary, d.Output)
	}
}

// Ensure a task the running daemon holds shows why.
func TestShow_held(t *testing.T) {
	root := showRoot(t)
	d, err := status.Show(root, "demo", "10", status.ShowOptions{Held: []held.Task{{List: "demo", ID: "10", Reason: "the disk is full"}}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != "held" || d.Reason != "the disk is full" {
		t.Errorf("outcome %q, reason %q; want held, the disk is full", d.Outcome, d.Reason)
	}
}

// Ensure status says, under a task that has not ended, that it runs in
// the home directory because its Claude Code session's is not known.
func TestStatus_cwdNote(t *testing.T) {
	root := showRoot(t)
	list := "0df8413f-f2c4-4bbb-8f31-6c13e4c6364e"
	writeTask(t, filepath.Join(root, list, "2.json"), `{"subject": "Tidy up", "owner": "taskd", "status": "pending",
 "metadata": {"taskd": {"state": "retrying", "attempt": 1, "error": "exit status 1", "cwdNote": "the session's directory is not known"}}}`)
	out, errOut, code := runCLI(t, "status", "--root", root, "--color", "never", list+"/2")
	want := "in: your home directory, for the Claude Code session's directory is"
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "(taskd show "+list+"/2\n") {
		t.Errorf("status: exit %d, %s; want it to say %q:\n%s", code, errOut, want, out)
	}
	out, _, _ = runCLI(t, "status", "--root", root, "--color", "never", list+"/1")
	if strings.Contains(out, "home directory") {
		t.Errorf("status notes the directory of a task that has ended:\n%s", out)
	}
}
