package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/taskd/taskd/bench/taskdrun"
)

// straceRun runs n tasks with strace attached to b's idle process (the
// daemon, or the floor) and fills b's system call figures.
func straceRun(work string, b *Build, n int) error {
	p, err := b.start(work, n)
	if err != nil {
		return err
	}
	defer p.Stop()
	// Outside the root: the daemon watches the root, and a trace written
	// inside it would wake the daemon with every line.
	f, err := os.CreateTemp(work, "strace-")
	if err != nil {
		return err
	}
	f.Close()
	trace := f.Name()
	pid := p.Pid()
	st := exec.Command("strace", "-f", "-qq", "-s", "256", "-e", "signal=none", "-o", trace, "-p", strconv.Itoa(pid))
	st.Stderr = os.Stderr
	if err := st.Start(); err != nil {
		return err
	}
	defer st.Wait()
	if err := taskdrun.WaitFor(30*time.Second, 5*time.Millisecond, func() bool { return traced(pid) }); err != nil {
		st.Process.Kill()
		return fmt.Errorf("strace did not attach: %w", err)
	}
	if err := p.run(n); err != nil {
		st.Process.Kill()
		return err
	}
	idle(pid)
	// SIGINT detaches strace and flushes its output.
	st.Process.Signal(os.Interrupt)
	if err := st.Wait(); err != nil && !strings.Contains(err.Error(), "interrupt") {
		return fmt.Errorf("strace: %w", err)
	}
	if f, err = os.Open(trace); err != nil {
		return err
	}
	defer f.Close()
	c, err := count(f)
	if err != nil {
		return err
	}
	b.Syscalls = float64(c.total) / float64(n)
	b.OwnSyscalls = float64(c.own) / float64(n)
	b.ForkedSyscalls = float64(c.forked) / float64(n)
	b.TaskFileOpens = float64(c.taskFileOpens) / float64(n)
	b.ByName = map[string]float64{}
	for name, v := range c.byName {
		b.ByName[name] = float64(v) / float64(n)
	}
	return nil
}

// traced reports whether every thread of process pid has a tracer.
func traced(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, t := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()))
		if err != nil {
			return false
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "TracerPid:"); ok && strings.TrimSpace(v) == "0" {
				return false
			}
		}
	}
	return true
}

// counts are the daemon's system calls in a trace.
type counts struct {
	// total is every call of the daemon's; own leaves out those the Go
	// runtime makes on a schedule of its own (runtime below), so that
	// it does not vary with the time the run takes; forked is the share
	// made by a forked process before its execve.
	total, own, forked int
	byName             map[string]int
	taskFileOpens      int
}

// runtime are the calls the Go runtime makes on its own schedule: its
// monitor's sleeps, its threads parking and waking, and preempting a
// goroutine by a signal. Their number follows the time a run takes.
var runtime = map[string]bool{"nanosleep": true, "futex": true, "sched_yield": true, "tgkill": true, "getpid": true, "rt_sigreturn": true}

var (
	// A line of `strace -f -o`: the thread, then a call, a call left
	// unfinished, or the rest of one resumed.
	callLine    = regexp.MustCompile(`^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()(.*)$`)
	taskFileArg = regexp.MustCompile(`^(?:AT_FDCWD|\d+(?:<[^>]*>)?), "(?:[^"]*/)?\d+\.json"`)
	execOK      = regexp.MustCompile(`= 0$`)
)

// count reads a trace of `strace -f` and counts the calls made by the
// daemon: those of every thread, except a forked process's calls after
// its execve succeeded (from then on it is the agent). A call strace
// splits into an unfinished line and a resumed one counts once.
func count(r io.Reader) (counts, error) {
	c := counts{byName: map[string]int{}}
	agents := map[string]bool{} // threads that became an agent
	before := map[string]int{}  // calls of each thread before that
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := callLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue // a signal, an exit, a detach
		}
		tid, resumed, name, rest := m[1], m[2], m[3], m[4]
		if resumed != "" {
			if resumed == "execve" && execOK.MatchString(rest) && !agents[tid] {
				agents[tid] = true
				c.forked += before[tid]
			}
			continue
		}
		if agents[tid] {
			continue
		}
		c.total++
		before[tid]++
		c.byName[name]++
		if !runtime[name] {
			c.own++
		}
		switch {
		case name == "execve" && execOK.MatchString(rest):
			agents[tid] = true
			c.forked += before[tid]
		case (name == "openat" || name == "open") && taskFileArg.MatchString(rest):
			c.taskFileOpens++
		}
	}
	return c, sc.Err()
}
