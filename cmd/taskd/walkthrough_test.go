package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// TestWalkthrough runs the shell blocks of the tour (docs/tour.md),
// verbatim and in order, in one shell, as a new user pasting them into a
// terminal would: on an empty home directory (so ~/.claude/tasks is new),
// with go install writing to an empty GOPATH. Where the tour says to look
// "a moment later", it waits: before a block that answers a task with
// taskd resolve, until that task waits for a person; before the last
// block, until every task of the tour has ended as the tour says. It
// checks what the blocks print, and stops the daemon the first block
// started, by its pid. The README's first task is the tour's beginning,
// block for block, so it is run too.
func TestWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and installs taskd and runs a daemon; skipped with -short")
	}
	for _, tool := range []string{"jq", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("TASKD_REQUIRE_TOOLS") == "1" {
				t.Fatalf("%s is not on PATH, and TASKD_REQUIRE_TOOLS=1: the tour (docs/tour.md) uses it", tool)
			}
			t.Skipf("%s is not on PATH: the tour (docs/tour.md) uses it (install it, e.g. apt-get install %s, to run this test)", tool, tool)
		}
	}
	blocks, err := tourBlocks(t)
	if err != nil {
		t.Fatal(err)
	}

	w := newWalk(t)
	for i, block := range blocks {
		for _, m := range resolveLine.FindAllStringSubmatch(block, -1) {
			w.waitForState(m[1], m[2], task.NeedsHuman)
		}
		if i == len(blocks)-1 {
			w.waitForState("default", "1", task.Succeeded)
			w.waitForState("default", "2", task.Succeeded)
			w.waitForState("default", "3", task.Cancelled)
		}
		w.run(i, block)
	}
	w.stop()

	out := w.output()
	if testing.Verbose() {
		t.Logf("output of the walkthrough:\n%s", out)
	}
	for _, want := range []string{
		"hello from taskd on ",                            // taskd logs -f default/1
		"needs_human",                                     // taskd status before the answer
		"answer: taskd resolve default/2 passed",          // ... with the command that answers
		"default/2 succeeded",                             // taskd wait
		"cancelled",                                       // taskd status at the end
		"HumanResolved", "TaskSucceeded", "TaskCancelled", // taskd tail
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the walkthrough's output lacks %q:\n%s", want, out)
		}
	}
	if got := strings.Count(out, " succeeded "); got < 3 {
		t.Errorf("taskd status shows %d succeeded tasks in all, want task 1 once and both at the end:\n%s", got, out)
	}
}

// resolveLine finds the tasks a block of the tour answers.
var resolveLine = regexp.MustCompile(`taskd resolve ([A-Za-z0-9_-]+)/([0-9]+) `)

// tourBlocks returns the ```sh blocks of docs/tour.md, having checked
// that the blocks of the README's "## A first task" section are its first
// ones.
func tourBlocks(t *testing.T) ([]string, error) {
	t.Helper()
	tour, err := os.ReadFile("../../docs/tour.md")
	if err != nil {
		return nil, err
	}
	blocks, err := shellBlocks("docs/tour.md", string(tour))
	if err != nil {
		return nil, err
	}
	if len(blocks) < 2 {
		return nil, fmt.Errorf("docs/tour.md: %d shell blocks, want the daemon's and the tasks'", len(blocks))
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		return nil, err
	}
	const heading = "\n## A first task\n"
	_, section, ok := strings.Cut(string(readme), heading)
	if !ok {
		return nil, fmt.Errorf("README.md has no %q section", strings.TrimSpace(heading))
	}
	section, _, _ = strings.Cut(section, "\n## ")
	first, err := shellBlocks("README.md", section)
	if err != nil {
		return nil, err
	}
	if len(first) == 0 || len(first) > len(blocks) {
		return nil, fmt.Errorf("README.md: %d shell blocks in its first task, want the tour's first ones", len(first))
	}
	for i, b := range first {
		if b != blocks[i] {
			return nil, fmt.Errorf("README.md: block %d of the first task is not the tour's:\n%s\nthe tour's:\n%s", i+1, b, blocks[i])
		}
	}
	return blocks, nil
}

// shellBlocks returns the bodies of the ```sh blocks of text, from the
// file name.
func shellBlocks(name, text string) ([]string, error) {
	var blocks []string
	for {
		_, rest, ok := strings.Cut(text, "```sh\n")
		if !ok {
			return blocks, nil
		}
		body, after, ok := strings.Cut(rest, "```")
		if !ok {
			return nil, fmt.Errorf("%s: a shell block is not closed", name)
		}
		blocks = append(blocks, body)
		text = after
	}
}

// walk is one shell session on a new home directory.
type walk struct {
	t       *testing.T
	home    string
	status  string // the shell reports each block's end here
	out     string // the shell's standard output and error
	sh      *exec.Cmd
	stdin   io.WriteCloser
	exited  chan error
	daemon  int // pid of the block that ended with "&"
	stopped bool
}

// newWalk starts sh with the environment of a new user: an empty home,
// and an empty GOPATH whose bin directory is GOBIN, so that the README's
// PATH line finds what go install installed. The build and module caches
// and the Go settings of this machine are kept, so nothing is downloaded.
func newWalk(t *testing.T) *walk {
	dir := t.TempDir()
	w := &walk{t: t, home: filepath.Join(dir, "home"), status: filepath.Join(dir, "status"), out: filepath.Join(dir, "output")}
	for _, d := range []string{w.home, w.status} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	goenv := map[string]string{}
	raw, err := exec.Command(goTool(), "env", "-json", "GOCACHE", "GOMODCACHE", "GOENV").Output()
	if err == nil {
		err = json.Unmarshal(raw, &goenv)
	}
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	gopath := filepath.Join(dir, "gopath")
	env := []string{
		"HOME=" + w.home, "GOPATH=" + gopath, "GOBIN=" + filepath.Join(gopath, "bin"),
		"GOCACHE=" + goenv["GOCACHE"], "GOMODCACHE=" + goenv["GOMODCACHE"], "GOENV=" + goenv["GOENV"],
		"PATH=" + os.Getenv("PATH") + string(os.PathListSeparator) + filepath.Dir(goTool()),
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "HOME" || name == "PATH" || name == "CLAUDE_CONFIG_DIR" ||
			strings.HasPrefix(name, "TASKD_") || strings.HasPrefix(name, "XDG_") && name != "XDG_RUNTIME_DIR",
			name == "GOPATH" || name == "GOBIN" || name == "GOCACHE" || name == "GOMODCACHE" || name == "GOENV":
			continue // the new user's, set above, or none (other GO* settings, and the tests' runtime directory, are kept)
		}
		env = append(env, kv)
	}
	out, err := os.Create(w.out)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	// umask 002, the more permissive of the usual ones: the README's
	// commands must keep the list private even then.
	w.sh = exec.Command("sh", "-c", "umask 002; set -e; . /dev/stdin")
	w.sh.Dir = "../.." // "In a clone of this repository"
	w.sh.Env = env
	w.sh.Stdout, w.sh.Stderr = out, out // files: the daemon inherits them and outlives no pipe
	if w.stdin, err = w.sh.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := w.sh.Start(); err != nil {
		t.Fatal(err)
	}
	w.exited = make(chan error, 1)
	go func() { w.exited <- w.sh.Wait() }()
	t.Cleanup(w.stop)
	return w
}

// goTool returns the go command that runs this test.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

func (w *walk) output() string {
	data, _ := os.ReadFile(w.out)
	return string(data)
}

// run pastes block i into the shell and waits until it has run; the shell
// stops at the first command that fails (set -e).
func (w *walk) run(i int, block string) {
	w.t.Helper()
	done := filepath.Join(w.status, fmt.Sprint(i))
	// After the block, record that it ended and the last background pid.
	script := block + fmt.Sprintf("echo \"$!\" > %s\n", done)
	if _, err := io.WriteString(w.stdin, script); err != nil {
		w.t.Fatalf("block %d: write to sh: %v", i+1, err)
	}
	deadline := time.Now().Add(5 * time.Minute) // the first block builds taskd
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if data, err := os.ReadFile(done); err == nil && strings.HasSuffix(string(data), "\n") {
			if strings.Contains(block, "&\n") {
				fmt.Sscan(string(data), &w.daemon)
			}
			return
		}
		select {
		case err := <-w.exited:
			w.exited <- err
			w.t.Fatalf("block %d failed (%v):\n%s\noutput:\n%s", i+1, err, block, w.output())
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("block %d did not finish in 5 minutes:\n%s\noutput:\n%s", i+1, block, w.output())
		}
	}
}

// waitForState waits until task list/id is in state want, and fails as
// soon as it has ended otherwise.
func (w *walk) waitForState(list, id string, want task.State) {
	w.t.Helper()
	path := filepath.Join(w.home, ".claude", "tasks", list, id+".json")
	deadline := time.Now().Add(2 * time.Minute)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		state := task.None
		if tf, err := taskfile.ReadFile(path); err == nil {
			state = task.Of(tf)
		}
		if state == want {
			return
		}
		if state.Ended() {
			data, _ := os.ReadFile(path)
			w.t.Fatalf("task %s/%s is %s, want %s:\n%s\noutput:\n%s", list, id, state, want, data, w.output())
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("task %s/%s is not %s within 2 minutes (it is %q); output:\n%s", list, id, want, state, w.output())
		}
		<-tick.C
	}
}

// stop ends the shell and stops the daemon it started: SIGTERM to its pid,
// then waiting until its lock on the root is released (SIGKILL after 30s).
func (w *walk) stop() {
	if w.stopped {
		return
	}
	w.stopped = true
	w.stdin.Close()
	if w.daemon > 0 {
		syscall.Kill(w.daemon, syscall.SIGTERM)
		root := filepath.Join(w.home, ".claude", "tasks")
		deadline := time.Now().Add(30 * time.Second)
		tick := time.NewTicker(20 * time.Millisecond)
		for {
			held, _, err := daemon.LockHolder(root)
			if !held || err != nil {
				break
			}
			if time.Now().After(deadline) {
				w.t.Errorf("the daemon (pid %d) did not stop within 30s of SIGTERM; killing it", w.daemon)
				syscall.Kill(w.daemon, syscall.SIGKILL)
				break
			}
			<-tick.C
		}
		tick.Stop()
	}
	select {
	case <-w.exited:
	case <-time.After(30 * time.Second):
		w.t.Errorf("sh did not exit")
		w.sh.Process.Kill()
	}
}
