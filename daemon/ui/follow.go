package ui

import (
	"path/filepath"

	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/taskfile"
)

// This file holds the output of the selected task that the reader
// follows: its latest attempt's log, from its last 64 KiB, as it grows.

// follow makes the reader follow task k's transcript.
func (r *reader) follow(k key) {
	if r.fol != nil {
		if r.fol.k == k {
			return
		}
		if r.fol.watched != "" {
			r.removeWatch(r.fol.watched)
		}
	}
	r.fol = nil
	if k.id == "" {
		return
	}
	dir, err := taskfile.Open(filepath.Join(r.opt.Root, k.list))
	if err != nil {
		return
	}
	n, _ := status.LatestAttempt(dir, k.id)
	fol := &following{k: k, dir: dir, lines: newRing(transcriptLines)}
	fol.f = status.NewFollower(dir.Path(), k.id, func(runDir string) string {
		fol.file = logOf(dir.Path(), runDir)
		return fol.file
	}, n)
	fol.f.SetTail(transcriptTail)
	fol.watch = func(path string) { r.addWatch(path) }
	fol.unwatch = r.removeWatch
	r.fol = fol
	fol.read()
}

// transcript is the followed transcript, for the view.
func (r *reader) transcript() transcriptMsg {
	if r.fol == nil {
		return transcriptMsg{}
	}
	return transcriptMsg{k: r.fol.k, attempt: r.fol.f.Attempt(), dir: r.fol.f.Dir(), file: r.fol.file, lines: r.fol.lines.lines()}
}

// following is the transcript of one task the reader follows: the
// current attempt's last lines.
type following struct {
	k       key
	file    string // the log read: transcript.log, stdout.log or stderr.log
	dir     *taskfile.Dir
	f       *status.Follower
	lines   *ring
	watched string // the run folder watched
	watch   func(string)
	unwatch func(string)
}

// read reads what the task's output gained, and watches the run folder
// of its latest attempt. The lines shown are the latest attempt's: when
// another starts, the earlier one's are let go.
func (fl *following) read() {
	for {
		fl.f.Read(fl.lines, func() (int, bool) {
			n, ended := status.LatestAttempt(fl.dir, fl.k.id)
			if n > fl.f.Attempt() {
				fl.lines.reset()
			}
			return n, ended
		})
		d := fl.f.Dir()
		if d == "" || d == fl.watched {
			return
		}
		if fl.watched != "" {
			fl.unwatch(fl.watched)
		}
		fl.watched = d
		fl.watch(d) // then read again what came before the watch began
	}
}

// logOf is the log of run folder runDir (of the list at listDir) the
// view shows: the one taskd logs shows (status.LogName), or, once the
// attempt has ended with that one empty, the agent's standard error,
// where an agent that failed before it began (its program missing, a bad
// flag, a make target missing) said why.
func logOf(listDir, runDir string) string {
	name := status.LogName(runDir, false, false)
	if size(listDir, filepath.Join(runDir, name)) == 0 && size(listDir, filepath.Join(runDir, "result.json")) > 0 &&
		size(listDir, filepath.Join(runDir, "stderr.log")) > 0 {
		return "stderr.log"
	}
	return name
}

// size is the size of the regular file path inside base (0 for anything
// else), following no link.
func size(base, path string) int64 {
	f, err := openLog(base, path)
	if err != nil {
		return 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	return fi.Size()
}
