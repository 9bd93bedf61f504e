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

	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/internal/proc"
)

// No orphans, nothing escapes. Each agent leads a process group of its
// own, and on Linux the kernel kills it when the daemon dies
// (dieWithParent), however it dies. That signal follows the thread that
// started the agent, not the process: an agent is started from a
// goroutine locked to its thread until it has been waited for
// (proc.StartLocked), so the thread cannot end first. Everything the
// agent starts, also what leaves its process group and session (setsid, a
// double fork), stays in its attempt's group of processes (proc.Group): a
// cgroup of its own on Linux with cgroup v2, else the processes carrying
// TASKD_RUN_DIR=<run folder> in their environment. The whole group is
// killed when the agent exits or is stopped (cancel, timeout, the
// daemon's stop), and, if the daemon died, by the next daemon before it
// handles the attempt (KillLeftover, which checks the start time cmd.json
// records, so that a pid given to another process since is never
// signalled). A process whose parent exited comes back to the daemon, the
// child subreaper of its descendants (proc.Reap), which waits for it once
// it exits, so none is left a zombie.

// startWait starts cmd in group g as the leader of a new process group,
// so that the agent and everything it starts can be signalled together,
// and returns a channel that gets Wait's result. Where the system
// supports it (Linux) the leader is also killed if the daemon dies: an
// agent that outlives the daemon would finish unseen, and its work would
// be done again by the attempt that replaces it.
func startWait(cmd *exec.Cmd, g *proc.Group) (<-chan error, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
	return g.Start(cmd)
}

// marker is what the environment of an attempt's processes carries: its
// run folder.
func marker(runDir string) string { return "TASKD_RUN_DIR=" + runDir }

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

// KillLeftover kills what a daemon that died while the attempt ran left
// running: the agent's process group, recorded in runDir/cmd.json (or the
// pid file of older run folders), if it still exists and is that
// attempt's; the attempt's cgroup (recorded in cmd.json, if it is that
// attempt's, or the one this daemon would make for it); and every
// process carrying TASKD_RUN_DIR=runDir in its environment. The same
// goes for the agents it ran in folders of its own (a loop's judge, its
// condition command). A group is the attempt's when its leader still runs
// and started when cmd.json says (on Linux, /proc/<pid>/stat's start time
// and the boot), or, once the leader is gone, when a member carries
// TASKD_RUN_DIR=runDir in its environment: a pid given to another process
// since is never signalled. Elsewhere than Linux nothing can be verified,
// so nothing is killed; the leftover then finishes on its own. It never
// waits for a task file's lock. It reports whether anything was killed.
func KillLeftover(runDir string) bool {
	killed := killLeftover(runDir)
	entries, _ := fsroot.ReadDirectory(runDir)
	for _, e := range entries {
		if e.IsDir() {
			killed = killLeftover(filepath.Join(runDir, e.Name())) || killed
		}
	}
	return killed
}

func killLeftover(runDir string) bool {
	killed := false
	rec, err := recordedGroup(runDir)
	if err == nil && rec.pid > 0 {
		if groupAlive(rec.pid) && rec.ours(runDir) {
			killed = signalGroup(rec.pid, syscall.SIGKILL) == nil
		}
	} else {
		for _, pgid := range groupsIn(runDir) {
			killed = signalGroup(pgid, syscall.SIGKILL) == nil || killed
		}
	}
	return proc.Supervise().KillLeftover(marker(runDir), rec.cgroup) || killed
}

// ours reports whether the living process group rec records is the
// attempt's, whose run folder is runDir.
func (rec group) ours(runDir string) bool {
	if start, boot, ok := procStart(rec.pid); ok && rec.start != 0 {
		// The leader runs: it is the agent if it started when recorded.
		// (A pid is never given to a new process while a group of that
		// id has members: if the leader is another process, the group
		// is gone.)
		return start == rec.start && boot == rec.boot
	}
	return slices.Contains(groupsIn(runDir), rec.pid)
}

// groupsIn returns the process groups of the processes whose environment
// holds TASKD_RUN_DIR=runDir, other than the caller's own group.
func groupsIn(runDir string) []int {
	own := syscall.Getpgrp()
	var groups []int
	for _, pid := range proc.Marked(marker(runDir)) {
		if pg := processGroup(pid); pg > 1 && pg != own && !slices.Contains(groups, pg) {
			groups = append(groups, pg)
		}
	}
	return groups
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

// A group is an agent's process group as its run folder records it: the
// leader's pid, and when it started (0 if not recorded) in which boot;
// and its attempt's cgroup, if it had one.
type group struct {
	pid    int
	start  uint64
	boot   string
	cgroup string
}

// recordedGroup reads the agent's process group from the run folder: an
// error if it records none (cmd.json is written without one before the
// agent starts).
func recordedGroup(runDir string) (group, error) {
	var info struct {
		PID    int    `json:"pid"`
		Start  uint64 `json:"startTime"`
		Boot   string `json:"boot"`
		Cgroup string `json:"cgroup"`
	}
	if data, err := readRunFile(runDir, "cmd.json", 1<<20); err == nil && json.Unmarshal(data, &info) == nil && (info.PID > 0 || info.Cgroup != "") {
		return group{info.PID, info.Start, info.Boot, info.Cgroup}, nil
	}
	data, err := readRunFile(runDir, "pid", 64)
	if err != nil {
		return group{}, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	return group{pid: pid}, err
}

// StartedIn reports whether the agent of the attempt whose run folder is
// runDir was started: cmd.json records its process group, or it left a
// result. A folder an attempt prepared ahead of its slot holds neither.
func StartedIn(runDir string) bool {
	if rec, err := recordedGroup(runDir); err == nil && rec.pid > 0 {
		return true
	}
	_, ok := ReadResult(runDir)
	return ok
}

// Entered reports whether the attempt whose run folder is runDir had its
// slot and went on to start its agent, as far as what it left shows
// before KillLeftover removes it: its cgroup, made just before the agent
// starts and removed once the agent has exited; or, for an attempt that
// had no cgroup, cmd.json saying so, written before the agent started
// (entered). A task claimed ahead of its slot is marked running only
// after its agent has started (job.StartMarkingLater), so a restart finds
// such a task starting whether or not its agent ran: this, with
// StartedIn, tells them apart.
func Entered(runDir string) bool {
	if proc.Supervise().Made(marker(runDir)) {
		return true
	}
	var info struct {
		Entered bool `json:"entered"`
	}
	data, err := readRunFile(runDir, "cmd.json", 1<<20)
	return err == nil && json.Unmarshal(data, &info) == nil && info.Entered
}
