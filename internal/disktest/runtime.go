package disktest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// RunWithRuntimeDir runs the tests of m, as TestMain does, with a runtime
// directory of their own: a new private directory set as XDG_RUNTIME_DIR
// for the test binary and every process it starts (taskd daemons and
// commands keep their status files and kept results there, package held),
// removed when the tests end. The user's runtime directory collects
// nothing of the tests, and no test reads a real daemon's status files.
//
// Tests that pass and leave a file in its taskd folder fail the run,
// naming the file: a daemon a test stopped removes its status file, the
// next daemon removes the one a killed daemon left, and an attempt whose
// end is recorded takes its kept result back. (Other programs' folders,
// such as the Claude Code CLI's sockets, are not looked at.)
func RunWithRuntimeDir(m *testing.M) int {
	dir, err := os.MkdirTemp("", "taskd-test-runtime-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "a runtime directory for the tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Setenv("XDG_RUNTIME_DIR", dir); err != nil {
		fmt.Fprintln(os.Stderr, "a runtime directory for the tests:", err)
		return 1
	}
	code := m.Run()
	if left := Leftovers(filepath.Join(dir, "taskd")); code == 0 && len(left) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the tests left files in their runtime directory:\n")
		for _, f := range left {
			fmt.Fprintln(os.Stderr, "\t"+f)
		}
		return 1
	}
	return code
}

// Leftovers returns what lies in dir other than directories, as paths
// relative to dir: what was written there and never removed.
func Leftovers(dir string) []string {
	var left []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		left = append(left, rel)
		return nil
	})
	return left
}
