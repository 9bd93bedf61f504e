// Package proctest tells a test what the kernel says of a process: that
// it runs (it exists and is not a zombie), and that it is doomed (a
// signal that ends it is on its way). A test that must show that nothing
// killed a process looks at both, so that a kill sent a moment ago and
// not yet delivered is not taken for a process that lives on. Linux only
// (/proc); imported by tests only.
package proctest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Running reports whether process pid exists and is not a zombie.
func Running(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(data, ')')
	return i >= 0 && i+2 < len(data) && data[i+2] != 'Z'
}

// fatal are the signals that end a process that does not handle them.
var fatal = []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT}

// Doomed reports whether one of the signals that end a process that does
// not handle them (SIGKILL, SIGTERM, SIGINT, SIGHUP, SIGQUIT) is pending
// for process pid: it may still run, but not for long.
func Doomed(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return false
	}
	var mask uint64
	for _, sig := range fatal {
		mask |= 1 << (sig - 1)
	}
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || name != "SigPnd" && name != "ShdPnd" {
			continue
		}
		if pending, err := strconv.ParseUint(strings.TrimSpace(value), 16, 64); err == nil && pending&mask != 0 {
			return true
		}
	}
	return false
}
