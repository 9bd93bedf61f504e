package proc

import (
	"crypto/sha256"
	"encoding/hex"
	"os/exec"
	"sync"
)

// Supervision. The processes of one attempt (an agent and whatever it
// starts, also in a session of its own, also after a double fork) are kept
// together so that they are killed together: on Linux with cgroup v2, in a
// cgroup of their own, made in a subtree this process may write (the
// delegated cgroup of its service, or its own cgroup where it may write
// it), and killed with cgroup.kill (or, on kernels without it, frozen and
// killed one by one). Where no cgroup can be had, each process that
// carries the attempt's marker (TASKD_RUN_DIR=<run folder>) in its
// environment is killed: a process that clears its environment escapes
// that. docs/security.md describes both.

// A Mode is how a Supervisor keeps an attempt's processes together.
type Mode int

const (
	// ByCgroup: each attempt in a cgroup of its own.
	ByCgroup Mode = iota + 1
	// ByEnvironment: an attempt's processes are those whose environment
	// holds its marker.
	ByEnvironment
)

// String is the mode's name: "cgroup" or "environment".
func (m Mode) String() string {
	if m == ByCgroup {
		return "cgroup"
	}
	return "environment"
}

// A Supervisor makes each attempt's Group. It is safe for concurrent use.
type Supervisor struct {
	mode Mode
	// base is the cgroup directory the attempts' cgroups are made in
	// (ByCgroup).
	base string
	// why says why no cgroup is used (ByEnvironment).
	why string
	// noKill: the kernel has no cgroup.kill (before Linux 5.14); a
	// cgroup is frozen, then each of its processes killed.
	noKill bool
}

var supervisor = sync.OnceValue(newSupervisor)

// Supervise returns this process's Supervisor, found (and its cgroup
// subtree made) the first time it is asked for.
func Supervise() *Supervisor { return supervisor() }

// Mode says how s keeps an attempt's processes together.
func (s *Supervisor) Mode() Mode { return s.mode }

// String says how s keeps an attempt's processes together, and where or
// why, for a person.
func (s *Supervisor) String() string {
	if s.mode != ByCgroup {
		return "by environment (each process carrying the attempt's TASKD_RUN_DIR is killed): " + s.why
	}
	how := "cgroup.kill"
	if s.noKill {
		how = "freeze, then kill each process: this kernel has no cgroup.kill"
	}
	return "by cgroup: each attempt in a cgroup of its own under " + s.base + " (" + how + ")"
}

// A Group is the processes of one attempt: those of its cgroup, or those
// whose environment holds its marker.
type Group struct {
	s      *Supervisor
	marker string // NAME=value in the environment of its processes
	dir    string // its cgroup, or "" (by environment)
	fd     int    // the cgroup's directory while a process starts in it, or -1
	// degraded says why the group has no cgroup (dir == "") although its
	// Supervisor makes them.
	degraded error
}

// Degraded says why the group's processes are known by their environment
// although its Supervisor keeps attempts in cgroups; nil if they are not.
func (g *Group) Degraded() error { return g.degraded }

// cgroupName is the name of the cgroup of the attempt whose processes
// carry marker: the same for every daemon, so one that restarts finds it.
func cgroupName(marker string) string {
	sum := sha256.Sum256([]byte(marker))
	return "attempt-" + hex.EncodeToString(sum[:10])
}

// Cgroup is the group's cgroup directory, or "" when its processes are
// known by their environment.
func (g *Group) Cgroup() string { return g.dir }

// Start starts cmd in the group (as StartLocked does): in its cgroup
// from its first instruction (clone3 with CLONE_INTO_CGROUP).
func (g *Group) Start(cmd *exec.Cmd) (<-chan error, error) {
	if err := g.prepare(cmd); err != nil {
		return nil, err
	}
	defer g.started()
	return StartLocked(cmd)
}
