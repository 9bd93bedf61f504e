package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/config"
)

// TestShow_WhereAHandWrittenTaskRan: a task written by hand that names
// no directory runs in its list's configured cwd (or the home
// directory); taskd show says where, from the attempt's cmd.json, as it
// does for a task submitted from a directory.
func TestShow_WhereAHandWrittenTaskRan(t *testing.T) {
	isolate(t)
	root := filepath.Join(t.TempDir(), "tasks")
	listCwd := t.TempDir()
	startTestDaemon(t, root, &config.FileConfig{Lists: map[string]config.ListConfig{"hand": {Cwd: listCwd}}})
	if err := os.MkdirAll(filepath.Join(root, "hand"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeTask(t, filepath.Join(root, "hand", "1.json"), `{"subject": "where am I", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "pwd"}}}`)
	if out, errOut, code := runCLI(t, "wait", "--root", root, "--timeout", "1m", "hand/1"); code != 0 {
		t.Fatalf("wait: exit %d: %s %s", code, out, errOut)
	}
	out, errOut, code := runCLI(t, "show", "--root", root, "hand/1")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "in:       "+listCwd+"\n") {
		t.Errorf("show does not say the task ran in %s:\n%s", listCwd, out)
	}
}
