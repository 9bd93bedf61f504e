package main

import (
	"strings"
	"testing"
)

// TestCount: the daemon's calls of a trace, a split call counted once, a
// forked process's calls counted until its execve succeeded and not
// after, the runtime's timed calls kept out of own, and the opens of a
// task file found by name.
func TestCount(t *testing.T) {
	trace := `100   openat(AT_FDCWD, "/r/bench/12.json", O_RDONLY|O_CLOEXEC) = 7
101   futex(0xc000, FUTEX_WAIT_PRIVATE, 0, NULL <unfinished ...>
100   openat(9</r/bench>, "12.json", O_RDONLY|O_CLOEXEC) = 8
101   <... futex resumed>)              = 0
100   openat(AT_FDCWD, "/r/bench/.taskd/runs/12/1/result.json", O_RDONLY) = 8
200   rt_sigaction(SIGINT, {sa_handler=SIG_DFL}, NULL, 8) = 0
200   execve("/usr/bin/sh", ["sh", "-c", "true"], 0xc0000 /* 3 vars */ <unfinished ...>
100   nanosleep({tv_sec=0, tv_nsec=20000}, NULL) = 0
200   <... execve resumed>)             = 0
200   brk(NULL)                         = 0x5600
200   exit_group(0)                     = ?
200   +++ exited with 0 +++
100   --- SIGCHLD {si_signo=SIGCHLD} ---
300   execve("/nonexistent", ["x"], 0xc0000 /* 3 vars */) = -1 ENOENT (No such file or directory)
300   write(2, "x", 1)                  = 1
`
	c, err := count(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	got := []int{c.total, c.own, c.forked, c.taskFileOpens, c.byName["openat"], c.byName["execve"]}
	want := []int{9, 7, 2, 2, 3, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("total, own, forked, task file opens, openat, execve = %v, want %v", got, want)
		}
	}
}
