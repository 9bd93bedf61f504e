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
// ago (six while its inode table block is unwritten): each new inode is
// found by scanning past the ones freed recently. After a directory tree
// is removed — a finished task root, a test's temporary directory, this
// bench's own work directory — creating a file in the same part of the
// disk can cost ten times as much for a few minutes. taskd creates eight
// inodes per task (its run folder and the task file's replacement), the
// peers one or two per job, so such a state moves
// taskd's figures most. The bench measures that cost before every
// throughput run (createCost) and prints it with the results, and says
// which kind of file system it works on (fsKind).

// settledLimit is what creating an inode may cost before a throughput
// run: about twice what it costs on a settled disk (15–30 µs on a slow
// virtual one; less on most), far below what it costs after a tree was
// removed nearby on ext4 without a journal (200–500 µs, falling back over
// minutes).
const settledLimit = 50 * time.Microsecond

// settledCost measures createCost and, while it is above settledLimit,
// waits for the disk to settle, measuring again every 10 s, for at most
// -settle over the whole bench; it returns the last cost measured.
func (b *bench) settledCost() (time.Duration, error) {
	for {
		cost, err := createCost(b.work)
		if err != nil || cost <= settledLimit || b.waited >= *settleFlag {
			return cost, err
		}
		wait := min(10*time.Second, *settleFlag-b.waited)
		fmt.Fprintf(os.Stderr, "creating an inode costs %s: waiting %s for the disk to settle (files removed nearby in the last minutes)\n", cost.Round(time.Microsecond), wait)
		time.Sleep(wait)
		b.waited += wait
	}
}

// workParent returns the directory to make the bench's work directory in:
// dir if set, else taskd-bench in the user's cache directory, which is on
// the file system of the home directory like ~/.claude/tasks. (Not /tmp:
// on a shared machine it is where test runs remove their trees, and on
// many systems it is a tmpfs, faster than any disk a user's tasks are on.)
// If that cannot be made, the system's temporary directory.
func workParent(dir string) string {
	if dir != "" {
		return dir
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	d := filepath.Join(cache, "taskd-bench")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return ""
	}
	return d
}

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

// fsKind names the file system dir is on, as Linux tells: its type from
// /proc/self/mountinfo, and for ext4 whether it has a journal ("ext4
// without a journal" is the case the bench warns about); "" if unknown.
func fsKind(dir string) string {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return ""
	}
	// The encoding of dev_t by glibc's makedev.
	dev := uint64(st.Dev)
	major := (dev>>8)&0xfff | (dev>>32)&0xfffff000
	minor := dev&0xff | (dev>>12)&0xffffff00
	id := fmt.Sprintf("%d:%d", major, minor)
	info, _ := os.ReadFile("/proc/self/mountinfo")
	fsType := ""
	for line := range strings.SplitSeq(string(info), "\n") {
		// 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw
		pre, post, ok := strings.Cut(line, " - ")
		if f, g := strings.Fields(pre), strings.Fields(post); ok && len(f) > 2 && f[2] == id && len(g) > 0 {
			fsType = g[0]
		}
	}
	if fsType != "ext4" {
		return fsType
	}
	// ext4 lists its devices under /proc/fs/ext4 by kernel name, and jbd2
	// those with a journal.
	uevent, _ := os.ReadFile(fmt.Sprintf("/sys/dev/block/%s/uevent", id))
	for line := range strings.SplitSeq(string(uevent), "\n") {
		if name, ok := strings.CutPrefix(line, "DEVNAME="); ok {
			if journals, _ := filepath.Glob(filepath.Join("/proc/fs/jbd2", name+"-*")); len(journals) == 0 {
				return "ext4 without a journal"
			}
		}
	}
	return "ext4"
}
