// Package proc starts every process taskd runs (agents, judges, git,
// notification commands, service managers) and, where the daemon is the
// child subreaper of its descendants (Reap), waits for the processes no
// one else waits for. A process started here is registered from before it
// exists until its Wait has collected it, and the reaper never collects a
// registered process: its exit status belongs to its Wait. A child started
// any other way could have its exit status taken by the reaper (Wait then
// fails with "no child processes"), so nothing in taskd starts one any
// other way (a test reads the module for it).
//
// It also keeps the processes of one attempt together, so that they are
// killed together (supervise.go): a cgroup of the attempt's own where
// cgroup v2 lets this process make one, else the processes carrying the
// attempt's marker in their environment.
package proc

import (
	"bytes"
	"os/exec"
	"runtime"
	"sync"
)

// registry holds the processes started here and not yet waited for.
var registry struct {
	// Read-locked while a process is being started and registered,
	// write-locked by a pass of the reaper: a child the reaper finds is
	// either registered or no one's.
	mu   sync.RWMutex
	pids sync.Map // pid → struct{}
}

// Start starts cmd, registered so that the reaper leaves it to Wait.
// Every process Start starts must be waited for with Wait (not cmd.Wait).
func Start(cmd *exec.Cmd) error {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	registry.pids.Store(cmd.Process.Pid, struct{}{})
	return nil
}

// Wait waits for cmd, started by Start, to exit (as cmd.Wait does) and
// forgets it.
func Wait(cmd *exec.Cmd) error {
	err := cmd.Wait()
	if cmd.Process != nil {
		registry.pids.Delete(cmd.Process.Pid)
	}
	return err
}

// Run starts cmd and waits for it, as cmd.Run does.
func Run(cmd *exec.Cmd) error {
	if err := Start(cmd); err != nil {
		return err
	}
	return Wait(cmd)
}

// Output runs cmd and returns its standard output, as cmd.Output does.
func Output(cmd *exec.Cmd) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout = &out
	err := Run(cmd)
	return out.Bytes(), err
}

// StartLocked starts cmd (as Start does) from a goroutine locked to its
// OS thread until cmd has been waited for, and returns a channel that gets
// Wait's result. A parent-death signal (SysProcAttr.Pdeathsig) follows the
// thread that started the process, not the process (go.dev/issue/27505):
// started here, the thread lives as long as the child, and the signal
// comes only when the daemon itself ends.
func StartLocked(cmd *exec.Cmd) (<-chan error, error) {
	started := make(chan error, 1)
	waited := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// Unlocked once the child is waited for (a goroutine that ends
		// locked ends its thread, which would be harmless, but a thread
		// is worth keeping).
		defer runtime.UnlockOSThread()
		if err := Start(cmd); err != nil {
			started <- err
			return
		}
		started <- nil
		waited <- Wait(cmd)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return waited, nil
}

// registered reports whether pid is a process started here and not yet
// waited for.
func registered(pid int) bool {
	_, ok := registry.pids.Load(pid)
	return ok
}
