package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// setBatchScheduling moves every thread of this process that has the
// default policy (SCHED_OTHER) to SCHED_BATCH, keeping its nice value;
// threads under another policy (idle, real-time) are left as they are.
// Threads made later (by the Go runtime, and the agents the daemon starts)
// inherit the policy from the thread that makes them. A SCHED_BATCH
// thread does not preempt a running normal or batch thread when it wakes
// up; it waits for that one's time slice to end or for an idle CPU. So the
// daemon's bookkeeping, which wakes often and briefly, no longer
// interrupts the agents it runs, and neither interrupts the user's
// interactive programs. CPU shares (nice) are unchanged. Unprivileged: a
// process may set this policy on its own threads.
//
// A thread that a pass lists but that exits before it is changed is
// skipped; one made meanwhile from a thread not yet changed is found by
// the next pass. On an error some threads may be changed and others not.
func setBatchScheduling() error {
	for range 5 {
		entries, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("set scheduling policy: %w", err)
		}
		changed := 0
		for _, e := range entries {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			attr, err := unix.SchedGetAttr(tid, 0)
			if errors.Is(err, unix.ESRCH) {
				continue // exited
			}
			if err != nil {
				return fmt.Errorf("set scheduling policy: thread %d: %w", tid, err)
			}
			if attr.Policy != unix.SCHED_NORMAL {
				continue
			}
			attr.Policy = unix.SCHED_BATCH
			// Runtime reads back as the thread's time slice; written, it
			// would pin the slice (Linux 6.12 and later). Zero keeps the
			// default.
			attr.Runtime = 0
			if err := unix.SchedSetAttr(tid, attr, 0); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("set scheduling policy: thread %d: %w", tid, err)
			}
			changed++
		}
		if changed == 0 {
			return nil
		}
	}
	return errors.New("set scheduling policy: threads kept appearing")
}
