package proc

import (
	"bytes"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

var reapOnce sync.Once

// Reap makes this process the child subreaper of its descendants
// (prctl PR_SET_CHILD_SUBREAPER): a process an agent left behind whose
// parent exited comes back to it rather than to init, and is waited for
// once it exits. The processes started by Start are left to their Wait.
func Reap(log *slog.Logger) error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl PR_SET_CHILD_SUBREAPER", err)
	}
	reapOnce.Do(func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGCHLD)
		go func() {
			again := time.NewTimer(time.Hour)
			var scanned time.Time
			for {
				select {
				case <-sig:
				case <-again.C:
				}
				scan := time.Since(scanned) >= scanEvery
				n, blocked := reapOrphans(scan)
				if blocked && scan {
					scanned = time.Now()
				}
				if blocked {
					// A registered child's exit, not yet collected by
					// its Wait, is ahead in the queue: look again soon.
					again.Reset(50 * time.Millisecond)
				}
				if n > 0 {
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

// scanEvery bounds how often the reaper looks through /proc for the
// children behind a registered child's exit that its Wait has not
// collected yet (reapUnregistered reads every process's stat: hundreds of
// system calls on a busy machine). Almost every agent's exit is such an
// exit, for the moment before its Wait collects it; looking each time
// would cost every task a scan of /proc. Instead the queue is looked at
// again 50 ms later, by when the Wait has most often collected it, and
// /proc is read at most once per scanEvery: an orphan that exits while
// agents keep ending is collected within about a second.
const scanEvery = time.Second

// reapOrphans waits for every exited child that is not registered, and
// reports how many it collected and whether a registered child's exit,
// which its Wait has not collected yet, is still there, in front of the
// others; with scan set, the others are then found through /proc.
func reapOrphans(scan bool) (n int, blocked bool) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for {
		var info unix.Siginfo
		// Look (WNOWAIT) at an exited child, taking nothing yet.
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err == syscall.EINTR {
			continue
		}
		pid := int(*(*int32)(unsafe.Add(unsafe.Pointer(&info), pidOffset)))
		if err != nil || pid <= 0 {
			return n, false
		}
		if registered(pid) {
			// The kernel shows this one first until it is collected:
			// the others are found by their parent.
			if scan {
				n += reapUnregistered()
			}
			return n, true
		}
		if !reap(pid) {
			return n, false
		}
		n++
	}
}

// reap collects pid if it has exited.
func reap(pid int) bool {
	var ws syscall.WaitStatus
	for {
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		return err == nil && got == pid
	}
}

// reapUnregistered collects every exited child that is not registered,
// found by its parent pid in /proc. (Registration happens under the lock
// the caller holds: a child not registered now is no one's.)
func reapUnregistered() int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || registered(pid) {
			continue
		}
		if ppid, zombie := parentOf(pid); ppid == self && zombie && reap(pid) {
			n++
		}
	}
	return n
}

// parentOf returns process pid's parent, and whether pid has exited and
// waits to be collected (a zombie).
func parentOf(pid int) (ppid int, zombie bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// pid (comm) state ppid …; comm may hold anything but ends at the
	// last parenthesis.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0] == "Z"
}
