package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/status"
)

// Ensure status says why each refused list is not served, and names the
// files it does not read, in its text and in --json: the daemon's own
// rules (daemon.CheckList), not a guess.
func TestStatus_refusedAndMisnamed(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tasks")
	outside := t.TempDir()
	for _, l := range []string{"open", "linked", "misnamed", "fine"} {
		if err := os.MkdirAll(filepath.Join(root, l), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(root, "open"), 0o777)
	os.Mkdir(filepath.Join(root, "linked", ".taskd"), 0o700)
	os.Symlink(outside, filepath.Join(root, "linked", ".taskd", "runs"))
	os.WriteFile(filepath.Join(root, "misnamed", "a b.json"), []byte(`{"owner": "taskd"}`), 0o600)
	os.WriteFile(filepath.Join(root, "misnamed", "x.JSON"), []byte(`{"owner": "taskd"}`), 0o600)
	foreign := os.Geteuid() == 0
	if foreign {
		os.MkdirAll(filepath.Join(root, "theirs"), 0o700)
		os.Chown(filepath.Join(root, "theirs"), 65534, 65534)
	}

	out, errOut, code := runCLI(t, "status", "--root", root, "--json")
	if code != 0 {
		t.Fatalf("status --json: exit %d: %s", code, errOut)
	}
	var lists []status.List
	if err := json.Unmarshal([]byte(out), &lists); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	byID := map[string]status.List{}
	for _, l := range lists {
		byID[l.ID] = l
	}
	tests := []struct {
		list, refused, fix string
	}{
		{"open", "writable by other users", "chmod go-w " + filepath.Join(root, "open")},
		{"linked", "a symbolic link (to " + outside + ")", "rm " + filepath.Join(root, "linked", ".taskd", "runs")},
		{"fine", "", ""},
	}
	if foreign {
		tests = append(tests, struct{ list, refused, fix string }{"theirs", "owned by another user (uid 65534", "chown 0 "})
	}
	for _, tt := range tests {
		l := byID[tt.list]
		if tt.refused == "" && (l.Refused != "" || l.Fix != "") {
			t.Errorf("list %s: refused %q, fix %q, want neither", tt.list, l.Refused, l.Fix)
		}
		if !strings.Contains(l.Refused, tt.refused) || !strings.Contains(l.Fix, tt.fix) {
			t.Errorf("list %s: refused %q, fix %q; want %q and %q", tt.list, l.Refused, l.Fix, tt.refused, tt.fix)
		}
	}
	m := byID["misnamed"].Misnamed
	if len(m) != 2 || m[0].Name != "a b.json" || m[1].Name != "x.JSON" || !strings.Contains(m[0].Fix, "mv 'a b.json' a_b.json") {
		t.Errorf("misnamed = %+v, want a b.json and x.JSON with how to rename them", m)
	}

	snap, err := snapshot(root, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	v := &statusView{root: root, lists: snap, refused: refusals(root, snap), now: statusNow, width: 80}
	var text bytes.Buffer
	v.render(&text)
	for _, want := range []string{
		"other users can write to this list (mode 0777)",
		"fix: chmod go-w " + filepath.Join(root, "open"),
		".taskd/runs is a symbolic link",
		"not read: a b.json: the name has a space",
		"not read: x.JSON",
	} {
		if !strings.Contains(strings.Join(strings.Fields(text.String()), " "), want) {
			t.Errorf("status does not say %q:\n%s", want, text.String())
		}
	}
	checkStatusText(t, text.String(), false)
}
