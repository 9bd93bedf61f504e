package proc

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// killMarked kills every process (but this one) whose environment holds
// marker, until none is left or a few seconds have passed: what one
// starts while another is killed carries the marker too, and is found by
// the next pass. It reports whether it found one.
func killMarked(marker string) bool {
	found := false
	deadline := time.Now().Add(killWait)
	for {
		pids := Marked(marker)
		if len(pids) == 0 || time.Now().After(deadline) {
			return found
		}
		found = true
		for _, pid := range pids {
			killIfMarked(pid, marker)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// killIfMarked kills process pid if it carries marker. The process is
// held by a pidfd while its environment is read, so a pid given to
// another process meanwhile is never signalled.
func killIfMarked(pid int, marker string) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if hasMarker(pid, marker) { // a kernel without pidfds (before 5.3)
			unix.Kill(pid, unix.SIGKILL)
		}
		return
	}
	defer unix.Close(fd)
	if hasMarker(pid, marker) {
		unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	}
}

// Marked returns the processes, other than this one, whose environment
// holds marker (NAME=value), among those whose environment this process
// may read (the user's own).
func Marked(marker string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err == nil && pid != self && hasMarker(pid, marker) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// hasMarker reports whether process pid's environment holds marker. (A
// process that has exited has none.)
func hasMarker(pid int, marker string) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	v := []byte(marker + "\x00")
	return bytes.HasPrefix(env, v) || bytes.Contains(env, append([]byte{0}, v...))
}
