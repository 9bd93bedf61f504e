package notify_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/notify"
	"github.com/taskd/taskd/internal/syncbuf"
	"github.com/taskd/taskd/internal/waitfor"
)

func newLog() (*slog.Logger, *syncbuf.Buffer) {
	b := &syncbuf.Buffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// TestWants: which states are notified; a nil notifier (no command)
// wants nothing and sends nothing.
func TestWants(t *testing.T) {
	log, _ := newLog()
	quiet := notify.New(&config.Notify{Command: []string{"true"}, Timeout: time.Second}, log)
	defer quiet.Close()
	loud := notify.New(&config.Notify{Command: []string{"true"}, Succeeded: true, Timeout: time.Second}, log)
	defer loud.Close()
	var none *notify.Notifier = notify.New(nil, log)
	if none != nil || notify.New(&config.Notify{}, log) != nil {
		t.Fatal("New without a command returned a notifier")
	}
	none.Send(notify.Notice{State: "failed"}) // does nothing
	none.Close()
	for _, tt := range []struct {
		state             string
		quiet, loud, none bool
	}{
		{"needs_human", true, true, false},
		{"failed", true, true, false},
		{"timed_out", true, true, false},
		{"stopped", true, true, false},
		{"succeeded", false, true, false},
		{"running", false, false, false},
		{"cancelled", false, false, false},
		{"", false, false, false},
	} {
		if got := [3]bool{quiet.Wants(tt.state), loud.Wants(tt.state), none.Wants(tt.state)}; got != [3]bool{tt.quiet, tt.loud, tt.none} {
			t.Errorf("Wants(%q) = %v, want %v", tt.state, got, [3]bool{tt.quiet, tt.loud, tt.none})
		}
	}
}

// TestNotice_Environment: the command gets the notice in its environment,
// one line each and bounded, without the daemon's own TASKD_ variables.
func TestNotice_Environment(t *testing.T) {
	out := t.TempDir()
	t.Setenv("TASKD_LEAK", "from the daemon")
	t.Setenv("NOTIFY_OUT", out)
	log, logs := newLog()
	n := notify.New(&config.Notify{Command: []string{"sh", "-c", `env > "$NOTIFY_OUT/$TASKD_TASK_ID"`}, Timeout: 30 * time.Second}, log)
	cost := 0.25
	long := strings.Repeat("é", 600) // 1200 bytes
	n.Send(notify.Notice{List: "L", ID: "1", Subject: "two\nlines\t here", State: "failed", Reason: long,
		Summary: "did  it", CostUSD: &cost, File: "/r/L/1.json", Root: "/r"})
	n.Send(notify.Notice{List: "L", ID: "2", State: "needs_human"})
	n.Close()

	env := func(id string) map[string]string {
		data, err := os.ReadFile(filepath.Join(out, id))
		if err != nil {
			t.Fatalf("the command did not run for task %s: %v\n%s", id, err, logs)
		}
		m := map[string]string{}
		for line := range strings.Lines(string(data)) {
			k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
			m[k] = v
		}
		return m
	}
	one := env("1")
	for k, want := range map[string]string{
		"TASKD_ROOT": "/r", "TASKD_LIST": "L", "TASKD_TASK_ID": "1", "TASKD_TASK_FILE": "/r/L/1.json",
		"TASKD_SUBJECT": "two lines here", "TASKD_STATE": "failed", "TASKD_SUMMARY": "did it",
		"TASKD_COST_USD": "0.25", "NOTIFY_OUT": out,
	} {
		if got := one[k]; got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if r := one["TASKD_REASON"]; len(r) > 1000 || !strings.HasPrefix(long, r) || len(r) < 998 {
		t.Errorf("TASKD_REASON is %d bytes, want the reason cut at a character boundary below 1000", len(r))
	}
	if _, ok := one["TASKD_LEAK"]; ok {
		t.Error("the daemon's own TASKD_ variable reached the command")
	}
	if _, ok := env("2")["TASKD_COST_USD"]; ok {
		t.Error("TASKD_COST_USD set for a notice without a cost")
	}
	if !strings.Contains(logs.String(), "notified") {
		t.Errorf("no debug line for a notice sent:\n%s", logs)
	}
}

// TestNotify_OneAtATimeInOrder: notices run one after the other, in the
// order they were sent, and Close waits for the queued ones.
func TestNotify_OneAtATimeInOrder(t *testing.T) {
	out := filepath.Join(t.TempDir(), "order")
	t.Setenv("NOTIFY_OUT", out)
	log, _ := newLog()
	// Each command notes its start and end; an overlap shows as two starts
	// in a row.
	n := notify.New(&config.Notify{Command: []string{"sh", "-c", `echo "start $TASKD_TASK_ID" >> "$NOTIFY_OUT"; sleep 0.02; echo "end $TASKD_TASK_ID" >> "$NOTIFY_OUT"`}, Timeout: 30 * time.Second}, log)
	var want []string
	for i := range 10 {
		id := strconv.Itoa(i)
		n.Send(notify.Notice{List: "L", ID: id, State: "failed"})
		want = append(want, "start "+id, "end "+id)
	}
	n.Close()
	data, _ := os.ReadFile(out)
	if got := strings.Split(strings.TrimSpace(string(data)), "\n"); !slices.Equal(got, want) {
		t.Errorf("the commands ran as\n%s\nwant each alone, in order", data)
	}
}

// TestNotify_Fails: a command that fails is logged with its output, and
// the next notice still runs.
func TestNotify_Fails(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ran")
	t.Setenv("NOTIFY_OUT", out)
	log, logs := newLog()
	n := notify.New(&config.Notify{Command: []string{"sh", "-c", `echo "$TASKD_TASK_ID" >> "$NOTIFY_OUT"; echo "no display" >&2; exit 3`}, Timeout: 30 * time.Second}, log)
	n.Send(notify.Notice{List: "L", ID: "1", State: "failed"})
	n.Send(notify.Notice{List: "L", ID: "2", State: "failed"})
	n.Close()
	if data, _ := os.ReadFile(out); string(data) != "1\n2\n" {
		t.Errorf("commands ran for %q, want both", data)
	}
	l := logs.String()
	if strings.Count(l, "notification command failed") != 2 || !strings.Contains(l, "exit status 3") || !strings.Contains(l, "no display") {
		t.Errorf("log:\n%s\nwant two failures with the exit status and the output", l)
	}
}

// TestNotify_Timeout: a command past its timeout is killed with its
// process group (a child it started too), and logged.
func TestNotify_Timeout(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("NOTIFY_OUT", dir)
	log, logs := newLog()
	n := notify.New(&config.Notify{Command: []string{"sh", "-c", `sleep 60 & echo $! > "$NOTIFY_OUT/child"; wait`}, Timeout: 500 * time.Millisecond}, log)
	n.Send(notify.Notice{List: "L", ID: "1", State: "failed"})
	waitfor.Cond(t, "the timeout's log line", 30*time.Second, func() bool { return strings.Contains(logs.String(), "notification command timed out") })
	data, err := os.ReadFile(filepath.Join(dir, "child"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	waitfor.Cond(t, "the command's child to be killed", 30*time.Second, func() bool { return gone(pid) })
	n.Close()
}

// TestNotify_QueueFull: Send never blocks; a notice that finds the queue
// full is dropped and logged, and every other one runs.
func TestNotify_QueueFull(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("NOTIFY_OUT", dir)
	log, logs := newLog()
	// Each command waits for the go file, then notes its task.
	n := notify.New(&config.Notify{Command: []string{"sh", "-c", `while [ ! -e "$NOTIFY_OUT/go" ]; do sleep 0.01; done; echo "$TASKD_TASK_ID" >> "$NOTIFY_OUT/ran"`}, Timeout: time.Minute}, log)
	const sent = 70
	done := make(chan struct{})
	go func() {
		for i := range sent {
			n.Send(notify.Notice{List: "L", ID: strconv.Itoa(i), State: "failed"})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Send blocked on a full queue")
	}
	dropped := strings.Count(logs.String(), "notification dropped: too many waiting")
	if dropped < sent-65 {
		t.Errorf("%d notices dropped, want at least %d (64 queued, one running)", dropped, sent-65)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	n.Close()
	data, _ := os.ReadFile(filepath.Join(dir, "ran"))
	ran := strings.Fields(string(data))
	if len(ran)+dropped != sent {
		t.Errorf("%d ran and %d dropped of %d sent", len(ran), dropped, sent)
	}
	if !slices.IsSortedFunc(ran, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y }) {
		t.Errorf("ran out of order: %v", ran)
	}
}

// TestClose_Stuck: Close waits at most one timeout; then the command under
// way is killed and the queued notices are dropped, and logged.
func TestClose_Stuck(t *testing.T) {
	log, logs := newLog()
	n := notify.New(&config.Notify{Command: []string{"sleep", "60"}, Timeout: 300 * time.Millisecond}, log)
	const sent = 10 // each takes a timeout: most are still queued when Close gives up
	for i := range sent {
		n.Send(notify.Notice{List: "L", ID: strconv.Itoa(i), State: "failed"})
	}
	start := time.Now()
	n.Close()
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Close took %v with a timeout of 300ms", d)
	}
	l := logs.String()
	ended := strings.Count(l, "notification command timed out") + strings.Count(l, "notification command failed")
	dropped := strings.Count(l, "notification dropped: the daemon stopped")
	if ended+dropped != sent || dropped == 0 || ended == 0 {
		t.Errorf("%d commands stopped and %d notices dropped of %d; want every notice accounted for, some dropped:\n%s", ended, dropped, sent, l)
	}
}

// gone reports whether process pid has exited (or is a zombie).
func gone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	_, after, _ := strings.Cut(string(data), ") ")
	return strings.HasPrefix(after, "Z")
}

// TestNotify_BackgroundKeepsOutput: a command that succeeds but leaves a
// process behind holding its output is not waited for past a second and
// is not logged as failed.
func TestNotify_BackgroundKeepsOutput(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("NOTIFY_OUT", dir)
	log, logs := newLog()
	n := notify.New(&config.Notify{Command: []string{"sh", "-c", `sleep 60 & echo $! > "$NOTIFY_OUT/child"; echo sent`}, Timeout: 30 * time.Second}, log)
	t.Cleanup(func() {
		if data, err := os.ReadFile(filepath.Join(dir, "child")); err == nil {
			if pid, _ := strconv.Atoi(strings.TrimSpace(string(data))); pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	n.Send(notify.Notice{List: "L", ID: "1", State: "failed"})
	waitfor.Cond(t, "the notice's log line", 30*time.Second, func() bool {
		return strings.Contains(logs.String(), "kept its output open")
	})
	n.Close()
	if l := logs.String(); strings.Contains(l, "notification command failed") {
		t.Errorf("log:\n%s\nwant no failure: the command succeeded", l)
	}
}
