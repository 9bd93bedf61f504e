//go:build unix

package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// startGroup starts cmd as the leader of a new process group, so that the
// agent and everything it starts can be signalled together. Where the
// system supports it (Linux) the leader is also killed if the daemon dies:
// an agent that outlives the daemon would finish unseen, and its work would
// be done again by the attempt that replaces it.
func startGroup(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
	return cmd.Start()
}

// signalGroup sends sig to the process group pgid. A group that is already
// gone is not an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("refusing to signal process group %d", pgid)
	}
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// groupAlive reports whether any process of group pgid exists.
func groupAlive(pgid int) bool {
	return pgid > 1 && syscall.Kill(-pgid, 0) == nil
}

// KillLeftover kills the process group recorded in runDir/cmd.json (or
// the pid file of older run folders) by a daemon that died while the
// attempt ran, if it still exists and is that attempt: on Linux a member of
// the group (the leader, or, once the leader is gone, any process left in
// it) must carry TASKD_RUN_DIR=runDir in its environment, so a recycled pid
// is never signalled. When no group is recorded - the daemon died between
// starting the agent and writing its pid - the groups of all processes
// carrying TASKD_RUN_DIR=runDir are killed. Elsewhere than Linux a group is
// only killed when a member can be verified the same way, which is never;
// the leftover then finishes on its own. It reports whether a group was
// killed.
func KillLeftover(runDir string) bool {
	pgid, err := recordedGroup(runDir)
	if err == nil && pgid > 0 {
		if !groupAlive(pgid) || !groupOf(pgid, runDir) {
			return false
		}
		return signalGroup(pgid, syscall.SIGKILL) == nil
	}
	killed := false
	for _, pgid := range groupsIn(runDir) {
		if signalGroup(pgid, syscall.SIGKILL) == nil {
			killed = true
		}
	}
	return killed
}

// groupsIn returns the process groups of the processes whose environment
// holds TASKD_RUN_DIR=runDir, other than the caller's own group.
func groupsIn(runDir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	own := syscall.Getpgrp()
	var groups []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !hasRunDir(pid, runDir) {
			continue
		}
		if pg := processGroup(pid); pg > 1 && pg != own && !slices.Contains(groups, pg) {
			groups = append(groups, pg)
		}
	}
	return groups
}

// groupOf reports whether a process of group pgid runs in runDir's attempt.
// The leader is looked at first; when the daemon dies the kernel kills it
// (dieWithParent), and what it started stays in its group.
func groupOf(pgid int, runDir string) bool {
	return hasRunDir(pgid, runDir) || slices.Contains(groupsIn(runDir), pgid)
}

// hasRunDir reports whether process pid's environment holds
// TASKD_RUN_DIR=runDir.
func hasRunDir(pid int, runDir string) bool {
	env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return false
	}
	v := []byte("TASKD_RUN_DIR=" + runDir + "\x00")
	return bytes.HasPrefix(env, v) || bytes.Contains(env, append([]byte{0}, v...))
}

// processGroup returns the process group of pid from /proc/<pid>/stat, or
// 0.
func processGroup(pid int) int {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid pgrp …; comm may hold anything but ends at the
	// last parenthesis.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 3 {
		return 0
	}
	pg, _ := strconv.Atoi(f[2])
	return pg
}

// recordedGroup reads the agent's process group from the run folder.
func recordedGroup(runDir string) (int, error) {
	var info struct {
		PID int `json:"pid"`
	}
	if data, err := readRunFile(runDir, "cmd.json", 1<<20); err == nil && json.Unmarshal(data, &info) == nil && info.PID > 0 {
		return info.PID, nil
	}
	data, err := readRunFile(runDir, "pid", 64)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
}
