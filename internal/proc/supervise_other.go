//go:build !linux

package proc

import "os/exec"

// Without cgroups nor a way to read other processes' environment, an
// attempt's processes are those of its process group, which its runner
// signals itself.

func newSupervisor() *Supervisor {
	return &Supervisor{mode: ByEnvironment, why: "this system has neither cgroups nor a readable environment of processes: only the agent's process group is killed"}
}

func (s *Supervisor) Group(marker string) *Group { return &Group{s: s, marker: marker, fd: -1} }

func (g *Group) prepare(*exec.Cmd) error               { return nil }
func (g *Group) started()                              {}
func (g *Group) Kill() bool                            { return false }
func (g *Group) Close() error                          { return nil }
func (s *Supervisor) KillLeftover(string, string) bool { return false }
func (s *Supervisor) Made(string) bool                 { return false }
func (s *Supervisor) Close()                           {}

// Marked finds nothing here.
func Marked(string) []int { return nil }

// SupervisionOf says that only process groups are signalled here.
func SupervisionOf(int) (Mode, string) { return ByEnvironment, newSupervisor().why }
