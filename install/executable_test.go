package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Ensure the binary is resolved through symlinks, and a temporary build
// ('go run') is refused unless allowed.
func TestResolveExecutable(t *testing.T) {
	dir := t.TempDir() // under os.TempDir(), like a 'go run' build
	bin := filepath.Join(dir, "bin", "taskd")
	mustNot(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	mustNot(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	link := filepath.Join(dir, "taskd-link")
	mustNot(t, os.Symlink(bin, link))
	realBin, err := filepath.EvalSymlinks(bin)
	mustNot(t, err)

	if got, err := resolveExecutable(link, true); err != nil || got != realBin {
		t.Errorf("resolveExecutable(link, allowTemp) = %q, %v; want %q", got, err, realBin)
	}
	_, err = resolveExecutable(link, false)
	if err == nil || !strings.Contains(err.Error(), "temporary directory") || !strings.Contains(err.Error(), "go install") {
		t.Errorf("resolveExecutable(temp binary) = %v, want a refusal that says to go install", err)
	}
	if _, err := resolveExecutable(filepath.Join(dir, "missing"), true); err == nil {
		t.Errorf("resolveExecutable(missing file): no error")
	}
	// The running test binary is a temporary build too.
	if _, err := resolveExecutable("", false); err == nil {
		t.Errorf("resolveExecutable(test binary): no error")
	}
}

var tempBuildTests = []struct {
	path string
	want bool
}{
	{filepath.Join(os.TempDir(), "go-build123", "b001", "exe", "taskd"), true},
	{filepath.Join(os.TempDir(), "taskd"), true},
	{"/home/alice/.cache/gotmp/go-build4242/b001/exe/taskd", true},
	{"/home/alice/go/bin/taskd", false},
	{"/usr/local/bin/taskd", false},
	{"/home/alice/go-builder/taskd", false},
	{"/home/alice/go-build/taskd", false},
}

func TestIsTempBuild(t *testing.T) {
	for _, tt := range tempBuildTests {
		if got := isTempBuild(tt.path); got != tt.want {
			t.Errorf("isTempBuild(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}
