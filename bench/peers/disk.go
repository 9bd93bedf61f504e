package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The throughput figures depend on the cost of creating a file, and on
// some file systems that cost depends on what was deleted minutes before.
// ext4 without a journal does not reuse an inode freed less than a minute
// ago (five while its inode table block is unwritten): each new inode is
// found by scanning past the ones freed recently. After a directory tree
// is removed — a finished task root, a test's temporary directory, this
// bench's own work directory — creating a file in the same part of the
// disk can cost ten times as much for a few minutes. taskd creates nine
// inodes per task (its run folder, the lock and the task file's
// replacement), the peers one or two per job, so such a state moves
// taskd's figures most. The bench measures that cost before every
// throughput run (createCost) and prints it with the results, and says
// which kind of file system it works on (fsKind).

// createCost creates, under dir, 100 folders shaped like taskd's run
// folders (two nested directories and five files each) and returns the
// mean time per inode created. Nothing is deleted, so the measurement
// does not change what it measures.
func createCost(dir string) (time.Duration, error) {
	base, err := os.MkdirTemp(dir, "create-cost-")
	if err != nil {
		return 0, err
	}
	const folders, perFolder = 100, 7
	start := time.Now()
	for i := range folders {
		run := filepath.Join(base, fmt.Sprint(i), "1")
		if err := os.MkdirAll(run, 0o755); err != nil {
			return 0, err
		}
		for _, name := range []string{"prompt.md", "cmd.json", "stdout.log", "stderr.log", "result.json"} {
			f, err := os.Create(filepath.Join(run, name))
			if err != nil {
				return 0, err
			}
			f.Close()
		}
	}
	return time.Since(start) / (folders * perFolder), nil
}

// fsKind names the file system dir is on, as far as Linux tells: "ext4
// without a journal" for the case the bench warns about, else the type
// from /proc/self/mounts, or "" if unknown.
func fsKind(dir string) string {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return ""
	}
	major, minor := (st.Dev>>8)&0xfff|(st.Dev>>32)&^0xfff, st.Dev&0xff|(st.Dev>>12)&^0xff
	uevent, err := os.ReadFile(fmt.Sprintf("/sys/dev/block/%d:%d/uevent", major, minor))
	if err != nil {
		return ""
	}
	var dev string
	for line := range strings.SplitSeq(string(uevent), "\n") {
		if v, ok := strings.CutPrefix(line, "DEVNAME="); ok {
			dev = v
		}
	}
	if dev == "" {
		return ""
	}
	if _, err := os.Stat(filepath.Join("/proc/fs/ext4", dev)); err == nil {
		if journals, _ := filepath.Glob(filepath.Join("/proc/fs/jbd2", dev+"-*")); len(journals) == 0 {
			return "ext4 without a journal"
		}
		return "ext4"
	}
	mounts, _ := os.ReadFile("/proc/self/mounts")
	for line := range strings.SplitSeq(string(mounts), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "/dev/"+dev {
			return f[2]
		}
	}
	return ""
}
