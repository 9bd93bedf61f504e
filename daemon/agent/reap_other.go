//go:build unix && !linux

package agent

import (
	"log/slog"
	"os/exec"
)

// startWait starts cmd as the leader of a new process group (startGroup)
// and returns a channel that gets Wait's result; or start's error. (No
// parent-death signal here, so no thread to keep: see reap_linux.go.)
func startWait(cmd *exec.Cmd) (<-chan error, error) {
	if err := startGroup(cmd); err != nil {
		return nil, err
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	return waited, nil
}

// Reap does nothing where the system has no child subreaper: an orphan an
// agent leaves goes to init, which waits for it.
func Reap(*slog.Logger) error { return nil }

// procStart reports nothing: the start time of a process is not read here
// (see KillLeftover).
func procStart(int) (uint64, string, bool) { return 0, "", false }
