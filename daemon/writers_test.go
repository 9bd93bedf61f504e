package daemon_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
)

// shellEditor edits every task file of $DIR, round after round until $STOP
// exists, the way a careful shell user does: take the task's lock as Claude
// Code and taskd do (mkdir <file>.lock), rewrite the file with jq into a
// temporary file and mv it into place, release the lock. It logs "ID R" for
// every update made.
const shellEditor = `
round=0
while [ ! -e "$STOP" ]; do
	round=$((round + 1))
	for f in "$DIR"/*.json; do
		id=${f##*/}; id=${id%.json}
		until mkdir "$f.lock" 2>/dev/null; do sleep 0.001; done
		if jq --arg k "shell_$round" '.metadata[$k] = true' "$f" > "$DIR/.$id.shell" && mv "$DIR/.$id.shell" "$f"; then
			echo "$id $round" >> "$LOG"
		fi
		rmdir "$f.lock"
	done
done
`

// TestConcurrentWriters runs exec tasks while two other writers rewrite the
// same task files over and over: a Node process holding Claude Code's lock
// (proper-lockfile) that changes subject and adds metadata keys in place,
// and a shell loop that edits with jq … > tmp && mv under the same lock.
// No update of either writer is lost, every task runs once and succeeds.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	node := nodeToolsDir(t)
	if _, err := exec.LookPath("jq"); err != nil {
		if os.Getenv("TASKD_REQUIRE_TOOLS") == "1" {
			t.Fatalf("jq is not installed, and TASKD_REQUIRE_TOOLS=1")
		}
		t.Skip("skipping: jq is not installed")
	}
	n := writersTasks
	if s := os.Getenv("TASKD_WRITERS_TASKS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	h := startDaemon(t, []string{"w"}, func(fc *config.FileConfig) { fc.Concurrency = 2 })
	dir := h.listDir("w")
	work := t.TempDir()
	marks := filepath.Join(work, "marks")
	os.Mkdir(marks, 0o755)
	for i := 1; i <= n; i++ {
		id := strconv.Itoa(i)
		h.drop("w", id, execTask("task "+id, fmt.Sprintf("echo run >> %s/%s; sleep 0.0%d", marks, id, i%5)))
	}

	stop := filepath.Join(work, "stop")
	nodeOut := &syncBuffer{}
	nodeCmd := exec.Command("node", filepath.Join(node, "rewrite-tasks.js"), dir, stop)
	nodeCmd.Stdout, nodeCmd.Stderr = nodeOut, nodeOut
	shellLog := filepath.Join(work, "shell.log")
	shellCmd := exec.Command("sh", "-c", shellEditor)
	shellCmd.Env = append(os.Environ(), "DIR="+dir, "STOP="+stop, "LOG="+shellLog)
	shellOut := &syncBuffer{}
	shellCmd.Stdout, shellCmd.Stderr = shellOut, shellOut
	for _, c := range []*exec.Cmd{nodeCmd, shellCmd} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if c.ProcessState == nil {
				c.Process.Kill()
				c.Wait()
			}
		})
	}
	start := time.Now()
	h.waitFor("every task to succeed", 10*time.Minute, func() bool {
		for i := 1; i <= n; i++ {
			tf, err := readTask(h, "w", strconv.Itoa(i))
			if err != nil || stateOf(tf) != task.Succeeded {
				return false
			}
		}
		return true
	})
	elapsed := time.Since(start)
	// Both writers go on for one more full round after the last task ended.
	nodeRound := func() int { return lastRound(nodeOut.String()) }
	shellRound := func() int { data, _ := os.ReadFile(shellLog); return lastRound(string(data)) }
	nr, sr := nodeRound(), shellRound()
	h.waitFor("a further round of both writers", 5*time.Minute, func() bool { return nodeRound() > nr+1 && shellRound() > sr+1 })
	os.WriteFile(stop, nil, 0o644)
	for name, c := range map[string]*exec.Cmd{"node": nodeCmd, "shell": shellCmd} {
		if err := c.Wait(); err != nil {
			t.Fatalf("%s writer: %v\n%s%s", name, err, nodeOut, shellOut)
		}
	}

	shellData, _ := os.ReadFile(shellLog)
	nodeUpdates, shellUpdates := updates(nodeOut.String()), updates(string(shellData))
	lost := 0
	for i := 1; i <= n; i++ {
		id := strconv.Itoa(i)
		tf := h.read("w", id)
		for _, r := range nodeUpdates[id] {
			v, _ := tf.Metadata.Bool("node_" + r)
			if !v || !strings.Contains(tf.Subject, "[node "+r+"]") {
				lost++
				t.Errorf("task %s lost the node writer's update of round %s (subject %q)", id, r, tf.Subject)
			}
		}
		for _, r := range shellUpdates[id] {
			if v, _ := tf.Metadata.Bool("shell_" + r); !v {
				lost++
				t.Errorf("task %s lost the shell writer's update of round %s", id, r)
			}
		}
		if s := stateOf(tf); s != task.Succeeded {
			t.Errorf("task %s is %q, want succeeded", id, s)
		}
		runs, _ := os.ReadFile(filepath.Join(marks, id))
		if got := bytes.Count(runs, []byte("run")); got != 1 {
			t.Errorf("task %s ran %d times, want 1", id, got)
		}
	}
	t.Logf("writers: %d tasks in %s; node made %d updates (%d rounds), shell %d (%d rounds); %d lost",
		n, elapsed.Round(time.Millisecond), count(nodeUpdates), nodeRound(), count(shellUpdates), shellRound(), lost)
}

// updates parses "ID ROUND" lines into the rounds each id was updated in.
func updates(log string) map[string][]string {
	out := map[string][]string{}
	for _, line := range strings.Split(log, "\n") {
		if id, r, ok := strings.Cut(line, " "); ok {
			out[id] = append(out[id], r)
		}
	}
	return out
}

func count(m map[string][]string) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}

// lastRound returns the round of the last complete "ID ROUND" line.
func lastRound(log string) int {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if _, r, ok := strings.Cut(lines[i], " "); ok {
			if n, err := strconv.Atoi(r); err == nil {
				return n
			}
		}
	}
	return 0
}

// nodeToolsDir returns testdata/node, skipping (or, with
// TASKD_REQUIRE_TOOLS=1, failing) when Node or its packages are missing.
func nodeToolsDir(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("..", "testdata", "node"))
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not on PATH"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "proper-lockfile")); err != nil {
		missing = "the npm packages are not installed (run: npm ci --prefix testdata/node)"
	}
	if missing != "" {
		if os.Getenv("TASKD_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%s, and TASKD_REQUIRE_TOOLS=1", missing)
		}
		t.Skipf("skipping: %s", missing)
	}
	return dir
}
