package agent

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/taskd/taskd/daemon/config"
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
		got, err := ReadTail(base, path, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("readTail(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	if _, err := ReadTail(base, filepath.Join(base, "missing"), 10); !os.IsNotExist(err) {
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
		folder, made, err := mkdirRun(root, dir)
		if err != nil {
			t.Fatalf("mkdirRun(%s): %v", dir, err)
		}
		folder.Close()
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
	if _, _, err := mkdirRun(root, file); err == nil {
		t.Error("mkdirRun over a file succeeded")
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "runs", "2")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mkdirRun(root, filepath.Join(root, "runs", "2", "1")); !errors.Is(err, fsroot.ErrLink) {
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

// TestExec_LoneSurrogate: a prompt holding a lone surrogate reaches the
// agent, and prompt.md, as valid UTF-8, the surrogate one U+FFFD.
func TestExec_LoneSurrogate(t *testing.T) {
	base := t.TempDir()
	cfg, prof := execProfile(t, base)
	out := filepath.Join(t.TempDir(), "got")
	a := &Attempt{ListDir: base, ListID: "l", TaskID: "1", N: 1, Profile: prof, Cwd: t.TempDir(), Timeout: time.Minute,
		Prompt: "printf '%s' 'a\xed\xa0\x80b' > " + out}
	a.Script = a.Prompt
	res, outcome := NewLocal(cfg, slog.New(slog.DiscardHandler)).Run(t.Context(), a)
	if outcome != Finished || !res.Success {
		t.Fatalf("Run = %+v, %v", res, outcome)
	}
	got, _ := os.ReadFile(out)
	if want := "a\uFFFDb"; string(got) != want {
		t.Errorf("the agent got %q, want %q", got, want)
	}
	prompt, _ := os.ReadFile(filepath.Join(a.Dir(), "prompt.md"))
	if !utf8.Valid(prompt) {
		t.Errorf("prompt.md is not UTF-8: %q", prompt)
	}
}

// TestAgentEnv: an agent gets the base variables and the profile's names
// and prefixes from the daemon's environment, the profile's NAME=value
// settings over them, and nothing else.
func TestAgentEnv(t *testing.T) {
	t.Setenv("TASKD_TEST_KEPT_OUT", "no")
	t.Setenv("OVERRIDDEN", "daemon")
	base := t.TempDir()
	cfg, err := config.NewConfig(base, nil, &config.FileConfig{Profiles: map[string]config.ProfileSpec{
		"p": {Command: []string{"sh"}, Flags: "none", Env: []string{"OVERRIDDEN", "OVERRIDDEN=profile", "SET_HERE=1"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	prof, _ := cfg.ResolveAgent("p", true)
	a := &Attempt{ListDir: base, ListID: "l", TaskID: "1", N: 1, Profile: prof}
	env := NewLocal(cfg, slog.New(slog.DiscardHandler)).agentEnv(a, a.Dir())
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s set twice", k)
		}
		got[k] = v
	}
	if got["OVERRIDDEN"] != "profile" || got["SET_HERE"] != "1" {
		t.Errorf("OVERRIDDEN=%q SET_HERE=%q, want profile and 1", got["OVERRIDDEN"], got["SET_HERE"])
	}
	if _, ok := got["TASKD_TEST_KEPT_OUT"]; ok {
		t.Error("a variable the profile does not name reached the agent")
	}
}

// TestRun_NoResult: an attempt with NoResult returns its result and
// leaves no result.json; one without writes it.
func TestRun_NoResult(t *testing.T) {
	base := t.TempDir()
	cfg, prof := execProfile(t, base)
	for n, noResult := range []bool{false, true} {
		a := &Attempt{ListDir: base, ListID: "l", TaskID: "1", N: n + 1, Profile: prof, Cwd: t.TempDir(), Timeout: time.Minute,
			Prompt: "exit 3", Script: "exit 3", NoResult: noResult}
		res, outcome := NewLocal(cfg, slog.New(slog.DiscardHandler)).Run(t.Context(), a)
		if outcome != Finished || res.ExitCode != 3 {
			t.Fatalf("NoResult %v: Run = %+v, %v, want exit code 3", noResult, res, outcome)
		}
		_, err := os.Stat(filepath.Join(a.Dir(), "result.json"))
		if got := err == nil; got == noResult {
			t.Errorf("NoResult %v: result.json written = %v, want %v", noResult, got, !noResult)
		}
	}
}
