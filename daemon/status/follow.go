package status

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
	"golang.org/x/sys/unix"
)

// A Follower reads a task's output as its attempts write it, as taskd
// logs -f prints it: the log of the attempt it is at from where it last
// read, then, when a later attempt starts, that one's from its start.
// taskd logs -f and taskd ui follow a task with one.
type Follower struct {
	list string                     // the task's list directory
	runs string                     // the task's run folders
	name func(runDir string) string // the log of a run folder it reads
	n    int                        // the attempt it reads
	off  int64                      // how far it has read attempt n's log
	tail int64                      // SetTail's
	cut  bool                       // the next read starts inside a line
	// empty is told of an attempt whose log stayed empty (OnEmpty).
	empty func(n int)
}

// NewFollower returns a Follower of the run folders of task id of the
// list at listDir, starting at attempt n (0: at the first that starts),
// reading in each the log name names. It follows no link inside the list
// and never waits on a file that is not a regular one (a FIFO).
func NewFollower(listDir, id string, name func(runDir string) string, n int) *Follower {
	return &Follower{list: listDir, runs: area.RunsDir(listDir, id), name: name, n: n}
}

// SetTail makes the Follower start each attempt's log at its last n bytes
// (from the line that begins there), not at its start: a view that keeps
// only the last lines need not read the rest.
func (f *Follower) SetTail(n int64) { f.tail = n }

// OnEmpty has fn told of each attempt whose log stayed empty, once it is
// over (a later attempt started, or the task ended): an agent that failed
// before it wrote a line said why on its standard error only.
func (f *Follower) OnEmpty(fn func(n int)) { f.empty = fn }

// Attempt returns the attempt whose log the Follower reads (0: none yet).
func (f *Follower) Attempt() int { return f.n }

// Dir returns the run folder of Attempt ("" before the first).
func (f *Follower) Dir() string {
	if f.n == 0 {
		return ""
	}
	return filepath.Join(f.runs, fmt.Sprint(f.n))
}

// Read writes to w what the logs have gained since the last Read: the
// rest of the attempt it is at, and, when latest says a later one has
// started, that one's from its start. latest returns the task's latest
// attempt and whether the task has ended. Read reports whether the task
// has ended and all its last attempt wrote is written.
func (f *Follower) Read(w io.Writer, latest func() (n int, ended bool)) bool {
	for {
		if f.n > 0 {
			f.copy(w)
		}
		cur, ended := latest()
		if cur > f.n {
			f.over()
			f.n, f.off = cur, 0
			continue
		}
		if ended && f.n > 0 {
			f.copy(w)
			f.over()
			return true
		}
		return false
	}
}

// over tells OnEmpty's function of attempt n, over, if its log stayed
// empty.
func (f *Follower) over() {
	if f.n > 0 && f.off == 0 && f.empty != nil {
		f.empty(f.n)
	}
}

// copy writes what attempt n's log holds past off to w.
func (f *Follower) copy(w io.Writer) {
	file, err := fsroot.OpenFile(f.list, filepath.Join(f.Dir(), f.name(f.Dir())), os.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return
	}
	defer file.Close()
	if fi, err := file.Stat(); err != nil || !fi.Mode().IsRegular() {
		return
	} else if f.off == 0 && f.tail > 0 && fi.Size() > f.tail {
		f.off, f.cut = fi.Size()-f.tail, true
	}
	file.Seek(f.off, io.SeekStart)
	if f.cut {
		var buf [4096]byte
		for f.cut {
			k, _ := file.Read(buf[:])
			if k == 0 {
				return
			}
			i := bytes.IndexByte(buf[:k], '\n')
			if i < 0 {
				f.off += int64(k)
				continue
			}
			f.off += int64(i + 1)
			f.cut = false
			file.Seek(f.off, io.SeekStart)
		}
	}
	n, _ := io.Copy(w, file)
	f.off += n
}

// LatestAttempt returns the number of task id's latest attempt (of a
// workflow, of its steps' runs) and whether it has ended: whether it is
// anything but claimed (running, or starting: prepared, its agent about to
// start; a task not started yet has no state).
func LatestAttempt(dir *taskfile.Dir, id string) (int, bool) {
	t, err := dir.Read(id)
	if err != nil {
		return 0, true
	}
	rec := task.RecordOf(t)
	return rec.Attempt, !rec.State.Claimed() && rec.State != task.None
}
