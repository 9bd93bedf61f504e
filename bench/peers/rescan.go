package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/taskd/taskd/bench/taskdrun"
)

// The safety rescan (the configuration's "rescan", every 5 minutes by
// default) reads every task file of every list again. What it costs in
// memory is the peak of the daemon's resident set during the rescan,
// above what the daemon holds while idle. The kernel keeps that peak as
// VmHWM in /proc/PID/status; writing "5" to /proc/PID/clear_refs resets it
// to the current RSS, so the peak measured is the rescan's alone, not the
// startup scan's.
//
// The rescan is recognised by what the daemon reads (/proc/PID/io, rchar):
// it has happened once the daemon has read at least the bytes of every
// task file since the peak was reset, and it is over once it reads nothing
// more.

// rescanBound is what the rescan may add to the idle RSS (issue: "held
// under 40 MiB above the idle figure").
const rescanBound = 40 << 20

// rescanPeriod is the rescan period the measured daemon runs with: long
// enough for the daemon to be idle after its startup scan and retention's
// first pass.
const rescanPeriod = 30 * time.Second

func (b *bench) rescan(n int) ([]row, error) {
	root := b.dir("root")
	list := filepath.Join(root, "bench")
	if err := os.MkdirAll(list, 0o700); err != nil {
		return nil, err
	}
	size, err := writeFinished(list, n)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	t0 := time.Now()
	d, err := b.startTaskdWith(root, 2, rescanPeriod.String())
	if err != nil {
		return nil, err
	}
	defer d.Stop()
	pid := d.Pid()
	// Idle: once the daemon has read nothing for a second after its start
	// (the startup scan, and retention's first look at every file), well
	// before the rescan.
	if err := quietFor(pid, time.Second, rescanPeriod-2*time.Second); err != nil {
		return nil, fmt.Errorf("the daemon's start with %d files did not settle before its rescan (raise rescanPeriod): %w", n, err)
	}
	idle, err := readProc(pid)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		return nil, fmt.Errorf("reset the peak RSS: %w", err)
	}
	read0, err := readChars(pid)
	if err != nil {
		return nil, err
	}
	// The rescan starts about rescanPeriod after the daemon did.
	var began, read time.Time
	last, quiet := read0, time.Now()
	err = taskdrun.WaitFor(rescanPeriod+5*time.Minute, time.Millisecond, func() bool {
		now, err := readChars(pid)
		if err != nil {
			return false
		}
		if now != last {
			if began.IsZero() {
				began = time.Now()
			}
			last, quiet = now, time.Now()
		}
		if read.IsZero() && now-read0 >= size {
			read = time.Now()
		}
		return !read.IsZero() && time.Since(quiet) > time.Second
	})
	if err != nil {
		return nil, fmt.Errorf("no rescan of %d files within %s of the start (read %d of %d bytes): %w", n, time.Since(t0).Round(time.Second), last-read0, size, err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	peak := statusField(status, "VmHWM") * 1024
	after := statusField(status, "VmRSS") * 1024
	within := "within"
	if peak-idle.rss >= rescanBound {
		within = "OVER"
	}
	note := fmt.Sprintf("%d files; peak %s MiB above idle, %s the 40 MiB bound", n, format(mib(peak-idle.rss)), within)
	return []row{
		{name: fmt.Sprintf("taskd idle RSS, %d finished tasks", n), unit: "MiB", values: map[string]float64{"taskd": mib(idle.rss)}},
		{name: fmt.Sprintf("taskd peak RSS during a rescan, %d finished tasks", n), unit: "MiB", values: map[string]float64{"taskd": mib(peak)}, note: note},
		{name: fmt.Sprintf("taskd RSS after the rescan, %d finished tasks", n), unit: "MiB", values: map[string]float64{"taskd": mib(after)}},
		{name: fmt.Sprintf("taskd rescan, %d finished tasks: reading every file", n), unit: "s", values: map[string]float64{"taskd": read.Sub(began).Seconds()}},
	}, nil
}

// stamp is how taskd writes a time into a task file.
const stamp = "2006-01-02T15:04:05.000Z07:00"

// quietFor waits up to timeout for process pid to read nothing for d.
func quietFor(pid int, d, timeout time.Duration) error {
	last, quiet := int64(-1), time.Now()
	return taskdrun.WaitFor(timeout, 10*time.Millisecond, func() bool {
		now, err := readChars(pid)
		if err != nil {
			return false
		}
		if now != last {
			last, quiet = now, time.Now()
		}
		return time.Since(quiet) >= d
	})
}

// readChars returns the bytes process pid has read (rchar: from files,
// the page cache included, pipes and sockets).
func readChars(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, err
	}
	return statusField(data, "rchar"), nil
}

// writeFinished writes n task files that ended as succeeded into list and
// returns their size in bytes. They ended an hour ago: well within the
// default retention of succeeded tasks, so the daemon measured keeps them
// (files that ended longer ago than that are removed at its start, and the
// measurement would be of their removal).
func writeFinished(list string, n int) (int64, error) {
	var size int64
	ended := time.Now().Add(-time.Hour).UTC()
	started, finished := ended.Add(-time.Second).Format(stamp), ended.Format(stamp)
	for i := 1; i <= n; i++ {
		id := strconv.Itoa(i)
		data := fmt.Appendf(nil, `{
  "id": %q,
  "subject": "finished %s",
  "description": "echo done",
  "activeForm": "finishing %s",
  "status": "completed",
  "owner": "taskd",
  "blocks": [],
  "blockedBy": [],
  "metadata": {
    "taskd": {
      "agent": "exec",
      "state": "succeeded",
      "attempt": 1,
      "startedAt": %q,
      "finishedAt": %q,
      "result": {"success": true, "summary": "done", "exitCode": 0, "runDir": ".taskd/runs/%s/1"}
    }
  }
}`, id, id, id, started, finished, id)
		if err := os.WriteFile(filepath.Join(list, id+".json"), data, 0o644); err != nil {
			return 0, err
		}
		size += int64(len(data))
	}
	return size, nil
}

// diskUse returns the inodes and the bytes of disk (allocated blocks) of
// everything under dir, dir included.
func diskUse(dir string) (inodes, bytes int64, err error) {
	err = filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(path, &st); err != nil {
			return nil // removed meanwhile
		}
		inodes++
		bytes += st.Blocks * 512
		return nil
	})
	return inodes, bytes, err
}

// perTask is what one finished task of `true` leaves in its list: the
// task file, its run folder and its lines of the event log.
type perTask struct {
	inodes float64
	bytes  float64
}

// diskRows are the disk figures: the median over the throughput runs.
func diskRows(runs []perTask) []row {
	var inodes, bytes []float64
	for _, r := range runs {
		inodes = append(inodes, r.inodes)
		bytes = append(bytes, r.bytes)
	}
	return []row{
		{name: "taskd disk per finished task of `true`: inodes", unit: "", values: map[string]float64{"taskd": median(inodes)}, note: "task file, run folder, event lines; before retention removes anything"},
		{name: "taskd disk per finished task of `true`: allocated", unit: "KiB", values: map[string]float64{"taskd": median(bytes) / 1024}},
	}
}

// writeJSON writes rows for bench/figures.
func writeJSON(path string, rows []row) error {
	type out struct {
		Name   string             `json:"name"`
		Unit   string             `json:"unit"`
		Floor  float64            `json:"floor,omitempty"`
		Values map[string]float64 `json:"values"`
		Higher bool               `json:"higher,omitempty"`
		Note   string             `json:"note,omitempty"`
	}
	var all []out
	for _, r := range rows {
		all = append(all, out{r.name, r.unit, r.floor, r.values, r.higher, r.note})
	}
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
