// Package eventlog is a list's event log, <list>/.taskd/events.jsonl: one
// JSON object a line, appended with O_APPEND in one write per line, so
// that lines from several processes never interleave and a crash leaves at
// most a missing last line. The log is a record, not state: it is not
// fsynced, and taskd never decides anything from it. The daemon's logs
// keep the events a full disk refuses and write them, in order and once
// each, when it has room (KeepFailed). docs/tasks.md lists the event types
// and their fields.
package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/internal/fsroot"
	"golang.org/x/sys/unix"
)

// An Event is one line of a list's event log. The fixed fields come first;
// Data holds the type-specific ones.
type Event struct {
	TS      time.Time      `json:"ts"`
	Type    string         `json:"type"`
	List    string         `json:"list"`
	Task    string         `json:"task,omitempty"`
	Parent  string         `json:"parent,omitempty"`
	Step    string         `json:"step,omitempty"`
	Attempt int            `json:"attempt,omitempty"`
	Data    map[string]any `json:"-"`
}

// MarshalJSON writes the fixed fields in order, then Data's keys (sorted),
// as one line: the bytes encoding/json writes for them, the fixed fields
// written here without its reflection (an event is appended for every
// step of every task).
func (e Event) MarshalJSON() ([]byte, error) {
	ts, err := e.TS.MarshalJSON()
	if err != nil {
		type fixed Event
		_, err = json.Marshal(fixed(e)) // the error as encoding/json words it
		return nil, err
	}
	b := make([]byte, 0, 160)
	b = append(append(b, `{"ts":`...), ts...)
	b = appendField(b, "type", e.Type, false)
	b = appendField(b, "list", e.List, false)
	b = appendField(b, "task", e.Task, true)
	b = appendField(b, "parent", e.Parent, true)
	b = appendField(b, "step", e.Step, true)
	if e.Attempt != 0 {
		b = strconv.AppendInt(append(b, `,"attempt":`...), int64(e.Attempt), 10)
	}
	if len(e.Data) == 0 {
		return append(b, '}'), nil
	}
	tail, err := json.Marshal(e.Data)
	if err != nil {
		return nil, err
	}
	return append(append(b, ','), tail[1:]...), nil
}

// appendField appends `,"key":value` to b, value quoted as encoding/json
// quotes a string; nothing if value is empty and omitEmpty.
func appendField(b []byte, key, value string, omitEmpty bool) []byte {
	if value == "" && omitEmpty {
		return b
	}
	b = append(append(append(b, `,"`...), key...), `":`...)
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(value) // a string always has a JSON form
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), value...), '"')
}

// UnmarshalJSON reads an event line, keeping the extra fields in Data.
func (e *Event) UnmarshalJSON(b []byte) error {
	type fixed Event
	var f fixed
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	var all map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for _, k := range []string{"ts", "type", "list", "task", "parent", "step", "attempt"} {
		delete(all, k)
	}
	*e = Event(f)
	if len(all) > 0 {
		e.Data = all
	}
	return nil
}

// Log appends events to one list's events.jsonl. Each event is one
// write(2) of a whole line on a descriptor opened with O_APPEND, so lines
// from several processes (the daemon, taskd commands run by agents) never
// interleave, and a crash leaves at most a missing last line, never a torn
// one followed by more; a write a full file system cuts short is undone
// (appendLine). The log is not fsynced: it is a record, while the
// task files are the state.
//
// An Log is safe for concurrent use.
type Log struct {
	list string // the list directory
	path string
	mu   sync.Mutex // protects f
	f    *os.File
	// tap sees every event appended, after the write (the mirroring of
	// handed-off children's events, package subagent); nil for none.
	tap atomic.Pointer[func(Event)]
	// muted drops every event: the list is another user's, or its .taskd
	// is not taskd's to write (a link), so nothing is written there.
	muted atomic.Bool
	// rotation, when its limit is set, rotates the file once an append
	// takes it past the limit (SetRotation); size is the file's size as
	// last known, under mu.
	rotation Rotation
	size     int64
	// keep, when set (KeepFailed), is how many lines whose append the
	// file system failed (a full disk) are kept, under mu, in pending,
	// oldest first: each is written before any line after it, by the
	// next append that finds room, or by Close.
	keep    int
	pending [][]byte
}

func New(listDir string) *Log {
	return &Log{list: listDir, path: area.EventsFile(listDir)}
}

// ErrKept is returned, wrapped, by an Append the file system failed whose
// event is kept to be written later (KeepFailed).
var ErrKept = errors.New("the event is kept until the log has room")

// Append writes ev, stamping its time if unset. Failures are returned for
// the caller to log; an event that cannot be written never stops work.
// With KeepFailed set, an event the file system cannot take now (a full
// disk) is kept, and written, once, before any later one, when it can.
func (l *Log) Append(ev Event) error {
	if l.muted.Load() {
		return nil
	}
	if ev.TS.IsZero() {
		ev.TS = time.Now()
	}
	if tap := l.tap.Load(); tap != nil {
		defer (*tap)(ev) // runs after the lock is released: the tap may append
	}
	line, err := ev.MarshalJSON()
	if err != nil {
		_, err = json.Marshal(ev) // the error as encoding/json words it
		return err
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	err = l.writePending()
	if err == nil {
		err = l.writeLine(line)
	}
	if err != nil {
		return l.keepFailed(line, err)
	}
	if l.rotation.MaxBytes > 0 && l.size >= l.rotation.MaxBytes {
		// Other writers (taskd commands run by agents) may still append
		// to the file now renamed: their lines land in the newest of the
		// kept files.
		l.f.Close()
		l.f, l.size = nil, 0
		err = Rotate(l.list, l.rotation.Keep)
	}
	return err
}

// writeLine appends line to the file, opening it first if it is not open.
// The caller holds l.mu.
func (l *Log) writeLine(line []byte) error {
	if l.f == nil {
		// Through fsroot: no link followed, never a file with other hard
		// links, made 0600.
		f, err := fsroot.OpenFile(l.list, l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
		if err != nil {
			return err
		}
		l.f = f
		if fi, err := f.Stat(); err == nil {
			l.size = fi.Size()
		}
	}
	n, err := appendLine(l.f, line)
	l.size += int64(n)
	return err
}

// writePending writes the kept lines, oldest first, until one fails. The
// caller holds l.mu.
func (l *Log) writePending() error {
	for len(l.pending) > 0 {
		if err := l.writeLine(l.pending[0]); err != nil {
			return err
		}
		l.pending[0] = nil
		l.pending = l.pending[1:]
	}
	l.pending = nil
	return nil
}

// keepFailed keeps line, whose append failed with err (or could not be
// tried: an older line kept failed), to be written later, if KeepFailed
// is set, err is the file system's (fsroot.WriteFailed: a full disk, say;
// or a write it cut short) and fewer than the limit are kept; it returns err, wrapped with ErrKept
// if the line is kept. The caller holds l.mu.
func (l *Log) keepFailed(line []byte, err error) error {
	if l.keep == 0 || !fsroot.WriteFailed(err) && !errors.Is(err, io.ErrShortWrite) { // a short write is undone (appendLine)
		return err
	}
	if len(l.pending) >= l.keep {
		return fmt.Errorf("%d events are kept already: %w", len(l.pending), err)
	}
	l.pending = append(l.pending, line)
	return fmt.Errorf("%w: %w", ErrKept, err)
}

// KeepFailed makes the log keep up to n events whose append the file
// system failed (a full disk, an I/O error), in memory, and write them,
// in order and once each, before the next event appended when there is
// room again, or at Close; 0 keeps none (the default). The daemon keeps
// them: the end of an attempt recorded in its task file once the disk
// has room, say, is logged even if the log's own file had none left at
// that moment.
func (l *Log) KeepFailed(n int) {
	l.mu.Lock()
	l.keep = n
	l.mu.Unlock()
}

// appendLine writes line at the end of f, which is open with O_APPEND,
// in one write(2), and returns how many bytes it added: all or none. (An
// os.File write would write the rest of a short write in a second
// write(2), which another writer's line can come before.) A short write —
// the file system is full — is undone: the part written, at the end of
// the file when written but perhaps followed by other writers' lines
// since, is overwritten with blanks, which the line after it (or the next
// one appended) begins with; a reader skips them. The log never holds a
// torn line, whoever else appends to it.
func appendLine(f *os.File, line []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	cerr := rc.Control(func(fd uintptr) {
		for {
			n, werr = unix.Write(int(fd), line)
			if werr != unix.EINTR {
				break
			}
		}
		if n <= 0 || n == len(line) {
			return
		}
		if werr == nil {
			werr = io.ErrShortWrite
		}
		// Our bytes end at the descriptor's offset: O_APPEND put them at
		// the end of the file as it was, and nobody else moves this
		// descriptor. pwrite(2) ignores the offset on an O_APPEND
		// descriptor, so the flag is off while they are blanked.
		end, serr := unix.Seek(int(fd), 0, io.SeekCurrent)
		flags, ferr := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if serr != nil || ferr != nil {
			return
		}
		if _, err := unix.FcntlInt(fd, unix.F_SETFL, flags&^unix.O_APPEND); err != nil {
			return
		}
		unix.Pwrite(int(fd), bytes.Repeat([]byte{' '}, n), end-int64(n))
		unix.FcntlInt(fd, unix.F_SETFL, flags)
		n = 0
	})
	if cerr != nil {
		return 0, cerr
	}
	if werr != nil {
		return 0, &fs.PathError{Op: "write", Path: f.Name(), Err: werr}
	}
	return n, nil
}

// SetRotation makes the log rotate its file when an append takes it to
// r.MaxBytes or more (see Rotate); a zero MaxBytes never rotates. Taskd
// commands run by agents append without rotating: the daemon's log does it.
func (l *Log) SetRotation(r Rotation) {
	l.mu.Lock()
	l.rotation = r
	l.mu.Unlock()
}

// SetTap makes fn see every event appended from now on, after it is
// written (fn may append); nil removes the tap.
func (l *Log) SetTap(fn func(Event)) {
	if fn == nil {
		l.tap.Store(nil)
		return
	}
	l.tap.Store(&fn)
}

// Mute drops every event appended while muted is set: nothing is written
// into a list that is another user's, or whose area is not taskd's to
// write.
func (l *Log) Mute(muted bool) { l.muted.Store(muted) }

// Close writes the events kept (KeepFailed) if it can and closes the
// log's file; a later Append opens it again. Events it could not write
// are dropped, and the error says how many.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var lost error
	if err := l.writePending(); err != nil {
		lost = fmt.Errorf("%d events of %s not written: %w", len(l.pending), l.path, err)
		l.pending = nil
	}
	if l.f == nil {
		return lost
	}
	err := l.f.Close()
	l.f = nil
	return errors.Join(lost, err)
}

// Read reads the event log of the list at listDir, the rotated files kept
// first, oldest first. A missing log is empty. A line that does not parse
// (it cannot be torn, but a person may have edited the file) is returned
// as an error together with the events read so far.
func Read(listDir string) ([]Event, error) {
	var out []Event
	for _, name := range Files(listDir) {
		evs, err := readFile(listDir, name)
		out = append(out, evs...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func readFile(listDir, name string) ([]Event, error) {
	f, err := fsroot.OpenFile(listDir, filepath.Join(area.Name, name), os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decode(f)
}

func decode(r io.Reader) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue // an empty line, or the blanks of an undone write
		}
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	return out, sc.Err()
}
