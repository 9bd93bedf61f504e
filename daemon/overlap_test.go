package daemon_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/task"
)

// A tracedCall is one completed system call of a daemon run under strace
// -f -y: its thread, name, arguments (descriptors followed by <path>) and
// return value.
type tracedCall struct {
	pid  int
	name string
	args string
	ret  string
}

var (
	tracedLine    = regexp.MustCompile(`^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\w+|\?)`)
	tracedStart   = regexp.MustCompile(`^(\d+)\s+(\w+)\((.*) <unfinished \.\.\.>$`)
	tracedResumed = regexp.MustCompile(`^(\d+)\s+<\.\.\. (\w+) resumed>(.*)\)\s+=\s+(-?\w+)`)
	// tracedPath is a path argument: a descriptor's path and a name
	// relative to it ("AT_FDCWD</cwd>, \"name\""), or a descriptor alone.
	taskIDEnv  = regexp.MustCompile(`"TASKD_TASK_ID=(\w+)"`)
	tracedPath = regexp.MustCompile(`(?:AT_FDCWD|\d+)<([^>]*)>(?:, "([^"]*)")?`)
)

// readTrace returns the calls of strace's output file, in the order they
// completed.
func readTrace(t *testing.T, path string) []tracedCall {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []tracedCall
	pending := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for sc.Scan() {
		line := sc.Text()
		if m := tracedStart.FindStringSubmatch(line); m != nil {
			if m[2] == "exit_group" { // it never returns: the exit is now
				pid, _ := strconv.Atoi(m[1])
				calls = append(calls, tracedCall{pid: pid, name: m[2], args: m[3], ret: "?"})
			}
			pending[m[1]+" "+m[2]] = m[3]
			continue
		}
		m := tracedResumed.FindStringSubmatch(line)
		if m != nil {
			m[3] = pending[m[1]+" "+m[2]] + m[3]
		} else if m = tracedLine.FindStringSubmatch(line); m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		calls = append(calls, tracedCall{pid: pid, name: m[2], args: m[3], ret: m[4]})
	}
	return calls
}

// paths returns the paths a call's arguments name, resolved against the
// descriptors they are relative to.
func (c tracedCall) paths() []string {
	var out []string
	for _, m := range tracedPath.FindAllStringSubmatch(c.args, -1) {
		p := m[1]
		if m[2] != "" {
			if filepath.IsAbs(m[2]) {
				p = m[2]
			} else {
				p = filepath.Join(m[1], m[2])
			}
		}
		out = append(out, p)
	}
	return out
}

// A daemonTrace is what a daemon run under strace did to one list: the
// positions, in its calls, of the renames onto each task's file, of each
// task's agent's execve and exit, and of the fsyncs of the directory.
type daemonTrace struct {
	calls    []tracedCall
	renames  map[string][]int // task → renames onto its file
	execs    map[string]int   // task → its agent's first execve
	exits    map[string]int   // task → its agent's exit
	dirSyncs []int
	opens    map[string]int // task → opens of its file (openat, when traced)
}

// startTraced starts a daemon process with concurrency slots on a new
// root with list l, under strace (the test is skipped without it), and
// returns a harness on it and a function that stops the daemon and reads
// its trace.
func startTraced(t *testing.T, concurrency int, calls ...string) (*harness, func() *daemonTrace) {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("TASKD_REQUIRE_TOOLS") == "1" {
			t.Fatalf("strace is not installed, and TASKD_REQUIRE_TOOLS=1")
		}
		t.Skip("skipping: strace is not installed")
	}
	root := newRoot(t, "l")
	h := &harness{t: t, root: root, logs: &syncBuffer{}}
	list, err := filepath.EvalSymlinks(h.listDir("l"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "trace")
	wrap := []string{strace, "-f", "-qq", "-y", "-v", "-s", "8192", "-o", out,
		"-e", "trace=" + strings.Join(append([]string{"fsync", "rename", "renameat", "renameat2", "execve", "exit_group"}, calls...), ",")}
	p := startDaemonProcUnder(t, root, concurrency, h.logs, wrap)
	return h, func() *daemonTrace {
		// The daemon is strace's child, the first thread of the trace.
		calls := readTrace(t, out)
		if len(calls) == 0 {
			t.Fatalf("strace recorded no calls (is ptrace allowed here?)")
		}
		syscall.Kill(calls[0].pid, syscall.SIGTERM)
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("the daemon under strace exited with %v\n%s", err, h.logs)
		}
		return newDaemonTrace(readTrace(t, out), list)
	}
}

func newDaemonTrace(calls []tracedCall, list string) *daemonTrace {
	tr := &daemonTrace{calls: calls, renames: map[string][]int{}, execs: map[string]int{}, exits: map[string]int{}, opens: map[string]int{}}
	agents := map[int]string{} // an agent's process → its task
	for i, c := range calls {
		switch c.name {
		case "fsync":
			if ps := c.paths(); c.ret == "0" && len(ps) == 1 && ps[0] == list {
				tr.dirSyncs = append(tr.dirSyncs, i)
			}
		case "rename", "renameat", "renameat2":
			ps := c.paths()
			if c.ret != "0" || len(ps) != 2 || filepath.Dir(ps[1]) != list {
				continue
			}
			if id, ok := strings.CutSuffix(filepath.Base(ps[1]), ".json"); ok {
				tr.renames[id] = append(tr.renames[id], i)
			}
		case "execve":
			m := taskIDEnv.FindStringSubmatch(c.args)
			if m == nil || c.ret != "0" {
				continue
			}
			if _, seen := tr.execs[m[1]]; !seen {
				tr.execs[m[1]], agents[c.pid] = i, m[1]
			}
		case "openat":
			ps := c.paths()
			if len(ps) != 1 || filepath.Dir(ps[0]) != list {
				continue
			}
			if id, ok := strings.CutSuffix(filepath.Base(ps[0]), ".json"); ok && !strings.HasPrefix(id, ".") {
				tr.opens[id]++
			}
		case "exit_group":
			if id, ok := agents[c.pid]; ok {
				tr.exits[id] = i
			}
		}
	}
	return tr
}

// dirSyncsBetween returns the fsyncs of the list's directory after call
// from and before call to.
func (tr *daemonTrace) dirSyncsBetween(from, to int) []int {
	var in []int
	for _, s := range tr.dirSyncs {
		if s > from && s < to {
			in = append(in, s)
		}
	}
	return in
}

// checkDurableBeforeStart checks that the agent of each task started only
// once its claim (the first rename onto its file) was durable: an fsync of
// the list's directory came between the two.
func (tr *daemonTrace) checkDurableBeforeStart(t *testing.T, ids ...string) {
	t.Helper()
	for _, id := range ids {
		rs, ex := tr.renames[id], tr.execs[id]
		if len(rs) == 0 || ex == 0 {
			t.Fatalf("task %s: renames onto its file at %v, agent's execve at %d: want a claim and an execve", id, rs, ex)
		}
		if len(tr.dirSyncsBetween(rs[0], ex)) == 0 {
			t.Errorf("task %s: claimed (rename) at %d, its agent started at %d, with no fsync of the list's directory in between (at %v):\n%s", id, rs[0], ex, tr.dirSyncs, traceBetween(tr.calls, rs[0], ex))
		}
	}
}

// TestOverlap_ClaimsShareDirSync runs a real daemon process under strace
// with two slots: two tasks whose agents wait on a gate, then four tasks
// dropped at once, two of which are claimed ahead of the slots while the
// first two run. It checks, on the system calls the daemon made:
//
//   - no agent starts before its own claim is durable: its execve comes
//     after an fsync of the list's directory made after its claim's
//     rename;
//   - the tasks claimed ahead of a slot (3 and 4, while 1 and 2 run) make
//     no fsync of the directory of their own while they wait: their
//     claims are made durable by the next fsync any write of the list
//     makes (the end of 1 or 2, or the first start that needs it), so
//     the list's directory is fsynced fewer times than there are claims
//     and ends.
func TestOverlap_ClaimsShareDirSync(t *testing.T) {
	t.Parallel()
	h, stop := startTraced(t, 2)
	wait, release := gate(t)
	ids := []string{"1", "2", "3", "4", "5", "6"}
	for _, id := range ids[:2] {
		h.drop("l", id, execTask("task "+id, wait))
	}
	h.waitState("l", "1", task.Running, 30*time.Second)
	h.waitState("l", "2", task.Running, 30*time.Second)
	for _, id := range ids[2:] {
		h.drop("l", id, execTask("task "+id, "true"))
	}
	h.waitPrepared("l", "3", "4")
	h.waitState("l", "3", task.Starting, 30*time.Second)
	h.waitState("l", "4", task.Starting, 30*time.Second)
	release()
	for _, id := range ids {
		h.waitState("l", id, task.Succeeded, 60*time.Second)
	}
	tr := stop()
	tr.checkDurableBeforeStart(t, ids...)
	// While 1 and 2 run, 3 and 4 are claimed and wait: from the first of
	// their claims to the exit of the first of 1 and 2, nothing asks for an
	// fsync of the directory but 3 and 4.
	from := min(tr.renames["3"][0], tr.renames["4"][0])
	to := min(tr.exits["1"], tr.exits["2"])
	if to == 0 {
		t.Fatalf("the exits of the agents of 1 and 2 are not in the trace")
	}
	if got := tr.dirSyncsBetween(from, to); len(got) > 0 {
		t.Errorf("the claims of 3 and 4, made ahead of their slots, fsynced the list's directory themselves (at %v, between %d and %d):\n%s", got, from, to, traceBetween(tr.calls, from, to))
	}
	writes := 2 * len(ids) // a claim and an end each (marking a task running skips the fsync)
	if len(tr.dirSyncs) >= writes {
		t.Errorf("%d fsyncs of the list's directory for %d claims and ends, want fewer", len(tr.dirSyncs), writes)
	}
	t.Logf("%d fsyncs of the list's directory for %d claims and ends of %d tasks", len(tr.dirSyncs), writes, len(ids))
}

// TestOverlap_SlowEndDoesNotHoldNextStart: with one slot, task 2 is
// claimed ahead while task 1's agent runs. Claude Code (its real lock,
// through proper-lockfile) then holds the lock of 1.json, so that the
// record of 1's end cannot be written. When 1's agent exits, 2's agent
// still starts, while 1's file says running; and it starts only once its
// own claim is durable — no other write fsyncs the directory meanwhile, so
// the fsync between its claim and its start is its own.
func TestOverlap_SlowEndDoesNotHoldNextStart(t *testing.T) {
	t.Parallel()
	node := nodeToolsDir(t)
	h, stop := startTraced(t, 1)
	wait, release := gate(t)
	marks := t.TempDir()
	h.drop("l", "1", execTask("task 1", wait))
	h.waitState("l", "1", task.Running, 30*time.Second)
	h.drop("l", "2", execTask("task 2", "echo ran > "+filepath.Join(marks, "2")))
	h.waitPrepared("l", "2")
	h.waitState("l", "2", task.Starting, 30*time.Second)
	lock := holdClaudeLock(t, node, filepath.Join(h.listDir("l"), "1.json"))
	release()
	h.waitFor("task 2's agent to run while 1's end waits for the lock", 30*time.Second, func() bool {
		return readString(marks, "2") == "ran\n"
	})
	if st := stateOf(h.read("l", "1")); st != task.Running {
		t.Errorf("task 1 is %q while Claude Code holds its lock, want running (its end not written)", st)
	}
	lock.unlock()
	h.waitState("l", "1", task.Succeeded, 30*time.Second)
	h.waitState("l", "2", task.Succeeded, 30*time.Second)
	tr := stop()
	tr.checkDurableBeforeStart(t, "1", "2")
	if end := tr.renames["1"]; len(end) < 2 || end[1] < tr.execs["2"] {
		t.Errorf("task 1's end was written (renames %v) before task 2's agent started (%d), want after: Claude Code held its lock", end, tr.execs["2"])
	}
}

// traceBetween shows calls from to to, one a line.
func traceBetween(calls []tracedCall, from, to int) string {
	var b strings.Builder
	for i := max(from, 0); i <= to && i < len(calls); i++ {
		c := calls[i]
		args := c.args
		if len(args) > 300 {
			args = args[:300] + "…"
		}
		b.WriteString(strconv.Itoa(i) + " " + strconv.Itoa(c.pid) + " " + c.name + "(" + args + ") = " + c.ret + "\n")
	}
	return b.String()
}

// TestOverlap_TaskFileOpens counts, under strace, how often a real daemon
// process with one slot, its start done, opens the files of twenty tasks
// of true dropped at once: once by the loop, to learn of the task, and once under the
// locks by each of its writes (the claim, its mark running when it was
// claimed ahead, its end), to check that no other writer changed the file.
// What the daemon wrote itself it does not read back: not the loop told
// of the write, not the job looking at its task after the agent (at most
// five opens per task on average, where reading back each write made
// six or more).
func TestOverlap_TaskFileOpens(t *testing.T) {
	t.Parallel()
	h, stop := startTraced(t, 1, "openat")
	// Once the daemon has scanned the root at its start (a task that runs
	// says it has), the tasks are dropped; the scan reads what it finds.
	h.drop("l", "0", execTask("task", "true"))
	h.waitState("l", "0", task.Succeeded, 60*time.Second)
	const n = 20
	for i := 1; i <= n; i++ {
		h.drop("l", strconv.Itoa(i), execTask("task", "true"))
	}
	for i := 1; i <= n; i++ {
		h.waitState("l", strconv.Itoa(i), task.Succeeded, 60*time.Second)
	}
	tr := stop()
	total := 0
	for i := 1; i <= n; i++ {
		total += tr.opens[strconv.Itoa(i)]
	}
	perTask := float64(total) / n
	t.Logf("%.2f opens of its file per task (%v)", perTask, tr.opens)
	if perTask > 5 {
		t.Errorf("%.2f opens of its file per task, want at most 5: %v", perTask, tr.opens)
	}
}
