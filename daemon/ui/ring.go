package ui

import (
	"bytes"
	"strings"

	"github.com/taskd/taskd/internal/termtext"
)

// Bounds of the transcript the view keeps: its last lines, each cut.
const (
	transcriptLines = 500
	lineBytes       = 2 << 10
)

// A ring keeps the last lines written to it, each cut to lineBytes and
// cleaned of control characters: the memory a transcript takes is bounded
// whatever the agent writes.
type ring struct {
	buf     []string
	next    int  // where the next line goes, once buf is full
	full    bool // buf has wrapped
	partial []byte
}

func newRing(n int) *ring { return &ring{buf: make([]string, 0, n)} }

// Write takes p as text whose lines end with '\n'; a line not ended yet
// waits for the rest (up to lineBytes of it).
func (r *ring) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			r.partial = appendCut(r.partial, p)
			break
		}
		r.partial = appendCut(r.partial, p[:i])
		r.add(string(r.partial))
		r.partial = r.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

// appendCut appends p to b, b kept within lineBytes.
func appendCut(b, p []byte) []byte {
	if room := lineBytes - len(b); len(p) > room {
		p = p[:max(room, 0)]
	}
	return append(b, p...)
}

func (r *ring) add(line string) {
	line = strings.TrimRight(termtext.Clean(strings.ToValidUTF8(line, "?")), " ")
	if len(r.buf) < cap(r.buf) {
		r.buf = append(r.buf, line)
		return
	}
	r.buf[r.next] = line
	r.next = (r.next + 1) % len(r.buf)
	r.full = true
}

// lines returns the lines kept, oldest first, with a line not ended yet
// last.
func (r *ring) lines() []string {
	out := make([]string, 0, len(r.buf)+1)
	if r.full {
		out = append(out, r.buf[r.next:]...)
		out = append(out, r.buf[:r.next]...)
	} else {
		out = append(out, r.buf...)
	}
	if len(r.partial) > 0 {
		out = append(out, termtext.Clean(strings.ToValidUTF8(string(r.partial), "?")))
	}
	return out
}

// reset lets every line go.
func (r *ring) reset() {
	r.buf, r.next, r.full, r.partial = r.buf[:0], 0, false, r.partial[:0]
}
