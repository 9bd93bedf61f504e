package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseTaskRef: a bare id names the task in the only list that has
// it; two lists that have it are named in the error; LIST/ID and a path
// name their list.
func TestParseTaskRef(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a/1.json", "a/2.json", "b/2.json", "b/3.json"} {
		writeTask(t, filepath.Join(root, p), `{"subject":"x"}`)
	}
	os.Mkdir(filepath.Join(root, "empty"), 0o700)
	for _, tt := range []struct {
		ref, want, wantErr string
	}{
		{"1", "a/1", ""},
		{"3", "b/3", ""},
		{"b/2", "b/2", ""},
		{filepath.Join(root, "a", "2.json"), "a/2", ""},
		{"2", "", `task "2": which list? 2 lists have it: a/2, b/2`},
		{"9", "", `task "9": no list in ` + root + ` has a task 9 (lists: a, b, empty)`},
		{"a/x.y", "", `"x.y" is not a task id`},
	} {
		got, err := parseTaskRef(root, tt.ref)
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("parseTaskRef(%q) error = %v, want %q", tt.ref, err, tt.wantErr)
		case tt.wantErr == "" && (err != nil || got.String() != tt.want):
			t.Errorf("parseTaskRef(%q) = %v, %v; want %s", tt.ref, got, err, tt.want)
		}
	}
}

func TestSubjectOf(t *testing.T) {
	for _, tt := range []struct{ prompt, want string }{
		{"Fix the login redirect", "Fix the login redirect"},
		{"/read main.go\n/read util.go\n\nExplain the design\nin detail", "Explain the design"},
		{"  /push name=a do a\n/run", "/push name=a do a"},
		{"", ""},
	} {
		if got := subjectOf(tt.prompt); got != tt.want {
			t.Errorf("subjectOf(%q) = %q, want %q", tt.prompt, got, tt.want)
		}
	}
}
