package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/internal/fsroot"
)

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
