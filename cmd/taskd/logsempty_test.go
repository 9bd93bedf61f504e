package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/claudestub"
	"github.com/taskd/taskd/taskfile"
)

// TestLogs_StderrWhenEmpty: a failed attempt whose agent said why only on
// standard error — a script, and the real Claude Code CLI refusing an
// option, whose transcript stays empty — shows that error in taskd logs,
// with a note naming the stream; an attempt with output shows its output
// alone, and --stderr is standard error as before.
func TestLogs_StderrWhenEmpty(t *testing.T) {
	isolate(t)
	bin := claudestub.Binary(t)
	stub := claudestub.New(t, func(int, string) claudestub.Turn { return claudestub.Turn{Text: "unused"} })
	root := filepath.Join(t.TempDir(), "tasks")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(t.TempDir(), "config.json")
	data, _ := json.Marshal(config.FileConfig{Profiles: map[string]config.ProfileSpec{"claude": {
		Command: []string{bin, "-p", "--output-format", "stream-json", "--verbose", "--no-such-flag"},
		Prompt:  "stdin", Output: "claude-stream", Env: stub.Env(t),
	}}})
	writeTask(t, cfgFile, string(data))
	stopDaemon := startDaemon(t, root, cfgFile)
	defer stopDaemon()

	submit := func(agent, prompt string) string {
		out := mustCLI(t, "submit", "--root", root, "--list", "l", "--agent", agent, prompt)
		file := strings.TrimSpace(out)
		waitUntil(t, file+" to end", 2*time.Minute, func() bool {
			tf, _ := taskfile.ReadFile(file)
			return tf != nil && task.Of(tf).Ended()
		})
		return "l/" + strings.TrimSuffix(filepath.Base(file), ".json")
	}
	script := submit("exec", "echo 'cannot open config.yaml' >&2; exit 3")
	claude := submit("claude", "say hi")
	talker := submit("exec", "echo partial; echo 'and a warning' >&2; exit 1")

	tests := []struct {
		args               []string
		wantOut, wantNote  string
		wantNoNote, absent string
	}{
		{args: []string{script}, wantOut: "cannot open config.yaml\n", wantNote: "the standard output of attempt 1 is empty; its standard error (stderr.log) follows"},
		{args: []string{script, "-f"}, wantOut: "cannot open config.yaml\n", wantNote: "standard error (stderr.log) follows"},
		{args: []string{script, "--attempt", "1"}, wantOut: "cannot open config.yaml\n", wantNote: "standard error (stderr.log) follows"},
		{args: []string{script, "--stderr"}, wantOut: "cannot open config.yaml\n"},
		{args: []string{claude}, wantOut: "unknown option '--no-such-flag'", wantNote: "the transcript of attempt 1 is empty; its standard error (stderr.log) follows"},
		{args: []string{talker}, wantOut: "partial\n", absent: "warning"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, code := runCLI(t, append([]string{"logs", "--root", root}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if !strings.Contains(out, tt.wantOut) || tt.absent != "" && strings.Contains(out, tt.absent) {
				t.Errorf("printed %q, want %q (and not %q)", out, tt.wantOut, tt.absent)
			}
			if tt.wantNote == "" && errOut != "" || !strings.Contains(errOut, tt.wantNote) {
				t.Errorf("stderr %q, want %q", errOut, tt.wantNote)
			}
		})
	}
}

// startDaemon runs taskd run (the real run function) on root with the
// configuration cfg until the returned function stops it.
func startDaemon(t *testing.T, root, cfg string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var daemonLog bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"run", "--root", root, "--config", cfg}, &bytes.Buffer{}, &daemonLog)
	}()
	waitUntil(t, "the daemon to take the root", time.Minute, func() bool { held, _, _ := daemon.LockHolder(root); return held })
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("taskd run: %v\n%s", err, daemonLog.String())
		}
	}
}
