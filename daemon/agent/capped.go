package agent

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/taskd/taskd/internal/fsroot"
)

// A cappedLog is one of an attempt's logs (stdout.log, stderr.log,
// transcript.log), bounded: the first half of its cap is written as it
// comes; past it, a line in the file says that what follows is held back,
// and only the last half of the cap is kept, in a ring in <log>.tail
// beside it. When it is closed, a line saying how much was cut and the
// kept end are appended, and the ring removed. The file only ever grows,
// so whoever follows it by offset (taskd logs -f, a worker sending it to
// its coordinator) reads it as it is. It is created when its first byte
// arrives: a stream that says nothing leaves no file, and every reader
// takes a missing log for an empty one. Writing never fails and never
// stops: the first error is kept for Close (a full disk loses output,
// not the agent).
type cappedLog struct {
	base, path string
	open       func() (int, error) // creates the log, at its first byte
	fd, ring   int                 // the log (-1 until its first byte), its ring (-1 until the head is full)
	head, tail int64               // what is kept of the start, of the end
	n          int64               // bytes written to it so far
	err        error               // the first error
	tried      bool                // open was called
	held       bool                // past the head: the line saying so is written
	closed     bool
}

// createCappedLog returns the log at path inside the list directory base,
// created (or emptied) at its first byte, keeping at most limit bytes of
// what it is written (and two lines of its own).
func createCappedLog(base, path string, limit int64) *cappedLog {
	return newCappedLog(func() (int, error) { return openRaw(base, path, logFlags) }, base, path, limit)
}

// createCappedLogIn is createCappedLog of a new log in folder, the run
// folder open, path being its path inside base: one no earlier run left
// there (a folder made for the attempt, or one whose earlier logs were
// removed, ClearEarlierLogs), so it is created exclusively, and anything
// put at its name meanwhile fails it. folder must stay open until the log
// is closed.
func createCappedLogIn(folder *fsroot.Dir, base, path string, limit int64) *cappedLog {
	return newCappedLog(func() (int, error) { return folder.OpenFD(filepath.Base(path), newLogFlags) }, base, path, limit)
}

// logFlags open a log, created or emptied; newLogFlags create one that
// must not exist. No link is followed and a path that is not a regular
// file (a FIFO planted there) is refused without being waited on
// (fsroot.OpenFD).
const (
	logFlags    = syscall.O_WRONLY | syscall.O_CREAT | syscall.O_TRUNC | syscall.O_APPEND
	newLogFlags = syscall.O_WRONLY | syscall.O_CREAT | syscall.O_EXCL | syscall.O_APPEND
)

func newCappedLog(open func() (int, error), base, path string, limit int64) *cappedLog {
	limit = max(limit&^1, 2)
	return &cappedLog{base: base, path: path, open: open, fd: -1, ring: -1, head: limit / 2, tail: limit / 2}
}

// opened reports whether the log's file is open, creating it the first
// time it is asked.
func (l *cappedLog) opened() bool {
	if !l.tried {
		l.tried = true
		fd, err := l.open()
		if err != nil {
			l.keep(fmt.Errorf("create %s: %w", filepath.Base(l.path), err))
		} else {
			l.fd = fd
		}
	}
	return l.fd >= 0
}

// Write keeps what p adds to the log's head or its end. It always takes
// all of p.
func (l *cappedLog) Write(p []byte) (int, error) {
	n := len(p)
	if l.closed || n == 0 {
		return n, nil
	}
	if !l.opened() {
		l.n += int64(n) // lost: the first error says why
		return n, nil
	}
	if l.n < l.head {
		k := min(int64(len(p)), l.head-l.n)
		l.keep(writeAll(l.fd, p[:k], -1, l.path))
		l.n += k
		p = p[k:]
		if len(p) == 0 {
			return n, nil
		}
	}
	if !l.held {
		l.held = true
		l.keep(writeAll(l.fd, []byte(fmt.Sprintf("\n[taskd: %s has reached %s, half of its cap (outputMaxMiB): what follows is held back, and its last %s are added here when the agent ends]\n",
			filepath.Base(l.path), SizeText(l.head), SizeText(l.tail))), -1, l.path))
		fd, err := openRaw(l.base, l.path+".tail", syscall.O_RDWR|syscall.O_CREAT|syscall.O_TRUNC)
		if l.keep(err); err != nil {
			l.n += int64(len(p))
			return n, nil
		}
		l.ring = fd
	}
	if l.ring < 0 {
		l.n += int64(len(p))
		return n, nil
	}
	if skip := int64(len(p)) - l.tail; skip > 0 {
		// Only its last tail bytes can stay.
		l.n += skip
		p = p[skip:]
	}
	for len(p) > 0 {
		at := (l.n - l.head) % l.tail
		k := min(int64(len(p)), l.tail-at)
		l.keep(writeAll(l.ring, p[:k], at, l.path+".tail"))
		l.n += k
		p = p[k:]
	}
	return n, nil
}

// Close appends what was held back (its last half, after a line saying
// how much was cut), removes the ring, closes the log, and returns how
// many bytes were cut, and the first error writing it met.
func (l *cappedLog) Close() (cut int64, err error) {
	if l.closed {
		return 0, l.err
	}
	l.closed = true
	if l.fd < 0 {
		return 0, l.err // nothing came, or the log could not be made
	}
	defer func() {
		l.keep(closeFD(l.fd, l.path))
	}()
	held := l.n - l.head
	if held <= 0 {
		return 0, l.err
	}
	kept := min(held, l.tail)
	if l.ring < 0 {
		kept = 0 // the ring could not be made: nothing was kept
	}
	cut = held - kept
	line := "\n[taskd: nothing was cut: the output held back follows]\n"
	if kept == 0 {
		line = fmt.Sprintf("\n[taskd: %s of output cut here (%d bytes); nothing of its end could be kept: %v]\n", SizeText(cut), cut, l.err)
	} else if cut > 0 {
		line = fmt.Sprintf("\n[taskd: %s of output cut here (%d bytes); its last %s follow]\n", SizeText(cut), cut, SizeText(kept))
	}
	l.keep(writeAll(l.fd, []byte(line), -1, l.path))
	if l.ring >= 0 {
		// The oldest kept byte is where the next would have gone.
		start := int64(0)
		if held > l.tail {
			start = (l.n - l.head) % l.tail
		}
		l.keep(l.copyRing(start, kept))
		l.keep(closeFD(l.ring, l.path+".tail"))
		l.keep(fsroot.Remove(l.base, l.path+".tail"))
	}
	return cut, l.err
}

// copyRing appends n bytes of the ring to the log, from start on, going
// round.
func (l *cappedLog) copyRing(start, n int64) error {
	buf := make([]byte, min(n, 1<<20))
	for n > 0 {
		k := min(int64(len(buf)), n, l.tail-start)
		got, err := syscall.Pread(l.ring, buf[:k], start)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || got == 0 {
			return &os.PathError{Op: "read", Path: l.path + ".tail", Err: cmpErr(err, io.ErrUnexpectedEOF)}
		}
		if err := writeAll(l.fd, buf[:got], -1, l.path); err != nil {
			return err
		}
		n -= int64(got)
		start = (start + int64(got)) % l.tail
	}
	return nil
}

// keep remembers err if it is the first.
func (l *cappedLog) keep(err error) {
	if l.err == nil && err != nil {
		l.err = err
	}
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

func closeFD(fd int, path string) error {
	if err := syscall.Close(fd); err != nil {
		return &os.PathError{Op: "close", Path: path, Err: err}
	}
	return nil
}

// SizeText is n bytes for a person: "16 MiB", "1.4 GiB", "300 bytes".
func SizeText(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	v, u := float64(n)/1024, 0
	for v >= 1024 && u < len(units)-1 {
		v, u = v/1024, u+1
	}
	if v == float64(int64(v)) || v >= 100 {
		return fmt.Sprintf("%.0f %s", v, units[u])
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}

// drain copies what an agent writes to the read end r of its pipe into
// log, and hands each piece to feed (if set), until every writer has
// closed the pipe or r is closed. It never stops reading for the log's
// sake: the agent is never held by its output.
func drain(r *os.File, log io.Writer, feed func([]byte)) {
	bp := drainBuffers.Get().(*[]byte)
	defer drainBuffers.Put(bp)
	buf := *bp
	for {
		n, err := r.Read(buf)
		if n > 0 {
			log.Write(buf[:n])
			if feed != nil {
				feed(buf[:n])
			}
		}
		if err != nil {
			return // the end of the pipe, or r closed: nothing more comes
		}
	}
}

// drainBuffers are drain's read buffers, reused from one attempt to the
// next: two of them per attempt, made anew, were most of what the daemon
// allocated, and so most of its garbage collections. Neither log nor feed
// keeps a buffer it was handed (io.Writer's contract).
var drainBuffers = sync.Pool{New: func() any {
	b := make([]byte, 256<<10)
	return &b
}}

// drainWait bounds how long an attempt's end waits for its pipes to be
// read to their end once its processes are killed.
const drainWait = 5 * time.Second

// outputPipes are the pipes an agent writes its stdout and stderr to.
type outputPipes struct {
	outR, outW, errR, errW *os.File
}

func newOutputPipes() (*outputPipes, error) {
	var p outputPipes
	var err error
	if p.outR, p.outW, err = os.Pipe(); err != nil {
		return nil, err
	}
	if p.errR, p.errW, err = os.Pipe(); err != nil {
		p.outR.Close()
		p.outW.Close()
		return nil, err
	}
	return &p, nil
}

// closeWriters closes this process's write ends (the agent has its own).
func (p *outputPipes) closeWriters() {
	p.outW.Close()
	p.errW.Close()
}

// closeReaders closes the read ends: a drain reading them stops.
func (p *outputPipes) closeReaders() {
	p.outR.Close()
	p.errR.Close()
}

// drain reads the pipes into stdout and stderr, and stdout into w too if
// it is set, until their writers are gone; the channel is closed then.
func (p *outputPipes) drain(stdout, stderr io.Writer, w *Watcher) <-chan struct{} {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var feed func([]byte)
	if w != nil {
		feed = func(b []byte) { w.Write(b) }
	}
	wg.Go(func() { drain(p.outR, stdout, feed) })
	wg.Go(func() { drain(p.errR, stderr, nil) })
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

// wait waits for the drains to end, at most d; then it stops them.
func (p *outputPipes) wait(drained <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-drained:
	case <-t.C:
	}
	p.closeReaders()
	<-drained
}
