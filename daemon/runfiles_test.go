package daemon

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/internal/fsroot"
)

// TestJSONFile_Overwrite: cmd.json is overwritten in place, never shorter
// than before (so never torn into a mix of two versions), and always
// holds exactly the last version written.
func TestJSONFile_Overwrite(t *testing.T) {
	base := t.TempDir()
	path := filepath.Join(base, "cmd.json")
	long := map[string]any{"argv": []string{"sh", "-c", strings.Repeat("x", 200)}}
	short := map[string]any{"pid": 7}
	f, err := createJSON(base, path, long)
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	first, _ := os.ReadFile(path)

	for _, v := range []map[string]any{short, long, short} {
		if err := f.overwrite(v); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < len(first) {
			t.Errorf("file shrank to %d bytes from %d", len(data), len(first))
		}
		var got map[string]any
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatalf("after overwrite: %v\n%s", err, data)
		}
		want, _ := json.Marshal(v)
		if gotJSON, _ := json.Marshal(got); string(gotJSON) != string(want) {
			t.Errorf("file holds %s, want %s", gotJSON, want)
		}
	}
	f.close()
	f.close() // a second close does nothing
}

func TestReadTail(t *testing.T) {
	base := t.TempDir()
	path := filepath.Join(base, "stdout.log")
	data := []byte(strings.Repeat("0123456789", 10))
	if err := writeNewFile(base, path, data); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{10, "0123456789"},
		{15, "567890123456789"},
		{1000, string(data)},
	} {
		got, err := readTail(base, path, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("readTail(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	if _, err := readTail(base, filepath.Join(base, "missing"), 10); !os.IsNotExist(err) {
		t.Errorf("readTail of a missing file: %v, want not exist", err)
	}
}

func TestMkdirRun(t *testing.T) {
	root := t.TempDir()
	for _, tt := range []struct {
		dir  string
		made bool
	}{
		{filepath.Join(root, "runs", "1", "1"), true},  // neither runs nor runs/1 exist
		{filepath.Join(root, "runs", "1", "2"), true},  // runs/1 exists
		{filepath.Join(root, "runs", "1", "2"), false}, // there already
	} {
		dir := tt.dir
		made, err := mkdirRun(root, dir)
		if err != nil {
			t.Fatalf("mkdirRun(%s): %v", dir, err)
		}
		if made != tt.made {
			t.Errorf("mkdirRun(%s) made = %v, want %v", dir, made, tt.made)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Fatalf("%s is not a directory: %v", dir, err)
		}
	}
	file := filepath.Join(root, "runs", "1", "3")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := mkdirRun(root, file); err == nil {
		t.Error("mkdirRun over a file succeeded")
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "runs", "2")); err != nil {
		t.Fatal(err)
	}
	if _, err := mkdirRun(root, filepath.Join(root, "runs", "2", "1")); !errors.Is(err, fsroot.ErrLink) {
		t.Errorf("mkdirRun through a link: %v, want fsroot.ErrLink", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("mkdirRun made %v through a link", entries)
	}
}

// TestProgramCache: a program is found on the agent's PATH, and once it is
// gone, it is not found, remembered or not.
func TestProgramCache(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	prog := filepath.Join(second, "agent")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=/nowhere", "PATH=" + first + string(os.PathListSeparator) + second}
	var c programCache
	for range 2 { // found, then remembered
		got, err := c.lookPath("agent", env)
		if err != nil || got != prog {
			t.Fatalf("lookPath = %q, %v; want %q", got, err, prog)
		}
	}
	if err := os.Remove(prog); err != nil {
		t.Fatal(err)
	}
	if got, err := c.lookPath("agent", env); err == nil {
		t.Fatalf("lookPath found %q after it was removed", got)
	}
	if _, err := c.lookPath("agent", []string{"PATH=" + first}); err == nil {
		t.Fatal("lookPath found a program on a PATH without it")
	}
}
