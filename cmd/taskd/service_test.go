package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon"
)

var taskRootTests = []struct {
	name, flag string
	env        map[string]string
	want       string
}{
	{"flag", "/srv/tasks", map[string]string{"TASKD_ROOT": "/x", "HOME": "/home/alice"}, "/srv/tasks"},
	{"TASKD_ROOT", "", map[string]string{"TASKD_ROOT": "/x/tasks", "CLAUDE_CONFIG_DIR": "/c", "HOME": "/home/alice"}, "/x/tasks"},
	{"CLAUDE_CONFIG_DIR", "", map[string]string{"CLAUDE_CONFIG_DIR": "/c", "HOME": "/home/alice"}, "/c/tasks"},
	{"HOME", "", map[string]string{"HOME": "/home/alice"}, "/home/alice/.claude/tasks"},
	{"cleaned", "/srv//tasks/", nil, "/srv/tasks"},
}

func TestTaskRoot(t *testing.T) {
	for _, tt := range taskRootTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := daemon.ResolveRoot(tt.flag, func(k string) string { return tt.env[k] })
			if err != nil || got != tt.want {
				t.Errorf("taskRoot(%q, %v) = %q, %v; want %q", tt.flag, tt.env, got, err, tt.want)
			}
		})
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := daemon.ResolveRoot("rel", func(string) string { return "" }); err != nil || got != filepath.Join(wd, "rel") {
		t.Errorf("taskRoot(rel) = %q, %v; want it made absolute", got, err)
	}
	if _, err := daemon.ResolveRoot("", func(string) string { return "" }); err == nil {
		t.Errorf("taskRoot with no flag and no environment: no error")
	}
}

var serviceUsageTests = [][]string{
	{"install", "extra"},
	{"install", "--bogus"},
	{"uninstall", "x"},
	{"start", "--bogus"},
	{"stop", "x"},
	{"service-status", "x"},
}

// Ensure the service commands reject what they do not take, before doing
// anything.
func TestServiceCommands_usage(t *testing.T) {
	for _, args := range serviceUsageTests {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, &stdout, &stderr)
		if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), "usage: taskd "+args[0]) {
			t.Errorf("run(%q) = %v, stderr %q; want a usage error", args, err, stderr.String())
		}
	}
}

// Ensure install --dry-run reaches package install: run from this test
// binary (a temporary build) it is refused, as root for being root and
// otherwise for the binary's place.
func TestInstall_dryRunRefusesTestBinary(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"install", "--dry-run", "--root", t.TempDir()}, &stdout, &stderr)
	want := "in a temporary directory"
	if os.Geteuid() == 0 {
		want = "refusing to run as root"
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("install --dry-run from the test binary: err = %v, want %q", err, want)
	}
	if stdout.Len() > 0 {
		t.Errorf("install --dry-run printed %q before refusing", stdout.String())
	}
}

// Ensure a missing --config file is reported before anything is done.
func TestInstall_missingConfig(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.json")
	err := run(context.Background(), []string{"install", "--config", missing}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--config") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("install --config %s: err = %v, want a --config not-exist error", missing, err)
	}
}
