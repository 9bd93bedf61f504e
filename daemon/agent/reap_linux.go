package agent

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// No orphans, on Linux. Each agent leads a process group of its own, and
// the kernel kills it when the daemon dies (dieWithParent), however it
// dies. That signal follows the thread that started the agent, not the
// process (go.dev/issue/27505): an agent is started from a goroutine
// locked to its thread until the agent has been waited for, so the thread
// cannot end first. What the agent itself started stays in its group, which
// is killed when the agent exits or is stopped, and, if the daemon died,
// by the next daemon before it handles the attempt (KillLeftover, which
// checks the start time cmd.json records, so that a pid given to another
// process since is never signalled). A process that left the group and
// whose parent exited comes back to the daemon, the child subreaper of its
// descendants (Reap), which waits for it once it exits, so none is left a
// zombie.

// reaper tracks the agents started and not yet waited for: their Wait,
// not the reaper, collects them.
var reaper struct {
	mu     sync.RWMutex // read: an agent is being started; write: a pass of reaping
	agents sync.Map     // pid → struct{}
}

// startWait starts cmd as the leader of a new process group (startGroup),
// from a goroutine locked to its OS thread that then waits for the
// process, and returns a channel that gets Wait's result; or start's
// error.
func startWait(cmd *exec.Cmd) (<-chan error, error) {
	started := make(chan error, 1)
	waited := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// Unlocked once the agent is waited for (not at the goroutine's
		// end while locked, which would end the thread): the thread lives
		// as long as the agent.
		defer runtime.UnlockOSThread()
		reaper.mu.RLock()
		err := startGroup(cmd)
		if err == nil {
			reaper.agents.Store(cmd.Process.Pid, struct{}{})
		}
		reaper.mu.RUnlock()
		started <- err
		if err != nil {
			return
		}
		err = cmd.Wait()
		reaper.agents.Delete(cmd.Process.Pid)
		waited <- err
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return waited, nil
}

var reapOnce sync.Once

// Reap makes this process the child subreaper of its descendants
// (prctl PR_SET_CHILD_SUBREAPER): a process an agent left behind whose
// parent exited comes back to it rather than to init, and is waited for
// once it exits. Call it once, from a process that starts no children but
// agents (taskd run): any other child could be collected here before its
// own Wait.
func Reap(log *slog.Logger) error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl PR_SET_CHILD_SUBREAPER", err)
	}
	reapOnce.Do(func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGCHLD)
		go func() {
			again := time.NewTimer(time.Hour)
			for {
				select {
				case <-sig:
				case <-again.C:
				}
				if n, blocked := reapOrphans(); blocked {
					// An agent's exit is ahead of the orphans in the
					// queue until its Wait collects it: look again soon.
					again.Reset(50 * time.Millisecond)
				} else if n > 0 {
					log.Debug("reaped processes agents left", "count", n)
				}
			}
		}()
	})
	return nil
}

// pidOffset is where si_pid is in a siginfo_t: after three ints, aligned
// as a pointer.
const pidOffset = (12 + unsafe.Sizeof(uintptr(0)) - 1) &^ (unsafe.Sizeof(uintptr(0)) - 1)

// reapOrphans waits for every exited child that is not an agent, and
// reports how many it collected, and whether an agent's exit, not yet
// collected by its Wait, kept it from looking further.
func reapOrphans() (n int, blocked bool) {
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err == syscall.EINTR {
			continue
		}
		pid := int(*(*int32)(unsafe.Add(unsafe.Pointer(&info), pidOffset)))
		if err != nil || pid <= 0 {
			return n, false
		}
		if _, agent := reaper.agents.Load(pid); agent {
			return n, true
		}
		var ws syscall.WaitStatus
		if got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); err != nil || got != pid {
			return n, false
		}
		n++
	}
}

// procStart returns when process pid started (clock ticks after boot,
// /proc/<pid>/stat's starttime) and the boot it started in, if it exists.
func procStart(pid int) (start uint64, boot string, ok bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", false
	}
	// pid (comm) state ppid …: starttime is the 20th field after comm,
	// which may hold anything but ends at the last parenthesis.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, "", false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 20 {
		return 0, "", false
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	return start, bootID(), err == nil
}

// bootID identifies this boot of the system.
var bootID = sync.OnceValue(func() string {
	data, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(data))
})
