package daemon

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskd/taskd/internal/fsroot"
)

// Event types written to <list>/.taskd/events.jsonl (DESIGN §7).
const (
	EvDaemonStarted    = "DaemonStarted"
	EvDaemonStopped    = "DaemonStopped"
	EvTaskAccepted     = "TaskAccepted"
	EvTaskRejected     = "TaskRejected"
	EvTaskStarted      = "TaskStarted"
	EvStepStarted      = "StepStarted"
	EvStepFinished     = "StepFinished"
	EvTaskSucceeded    = "TaskSucceeded"
	EvTaskFailed       = "TaskFailed"
	EvTaskTimedOut     = "TaskTimedOut"
	EvTaskCancelled    = "TaskCancelled"
	EvTaskInterrupted  = "TaskInterrupted"
	EvTaskRetrying     = "TaskRetrying"
	EvTaskWaiting      = "TaskWaiting"
	EvTaskResumed      = "TaskResumed"
	EvTaskNeedsHuman   = "TaskNeedsHuman"
	EvHumanResolved    = "HumanResolved"
	EvForkStarted      = "ForkStarted"
	EvJoinCompleted    = "JoinCompleted"
	EvGuardWarning     = "GuardWarning"
	EvGuardStopped     = "GuardStopped"
	EvMessageSent      = "MessageSent"
	EvMessageDelivered = "MessageDelivered"
	// ListRefused: the list is not served (another user's, writable by
	// others, a link in its .taskd); PathRefused: an operation on a task
	// met a link, or a path outside its list, and was refused. Both carry
	// "error" (and ListRefused "fix"). See docs/security.md.
	EvListRefused = "ListRefused"
	EvPathRefused = "PathRefused"
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
// as one line.
func (e Event) MarshalJSON() ([]byte, error) {
	type fixed Event
	head, err := json.Marshal(fixed(e))
	if err != nil {
		return nil, err
	}
	if len(e.Data) == 0 {
		return head, nil
	}
	tail, err := json.Marshal(e.Data)
	if err != nil {
		return nil, err
	}
	out := append(head[:len(head)-1], ',')
	return append(out, tail[1:]...), nil
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

// eventLog appends events to one list's events.jsonl. Each event is one
// write(2) of a whole line on a descriptor opened with O_APPEND, so lines
// from several processes (the daemon, taskd commands run by agents) never
// interleave, and a crash leaves at most a missing last line, never a torn
// one followed by more. The log is not fsynced: it is a record, while the
// task files are the state.
//
// An eventLog is safe for concurrent use.
type eventLog struct {
	list string // the list directory
	path string
	mu   sync.Mutex // protects f
	f    *os.File
	// tap sees every event appended, after the write (the mirroring of
	// handed-off children's events, aceevents.go); nil for none.
	tap atomic.Pointer[func(Event)]
	// muted drops every event: the list is another user's, or its .taskd
	// is not taskd's to write (a link), so nothing is written there.
	muted atomic.Bool
}

func newEventLog(listDir string) *eventLog {
	return &eventLog{list: listDir, path: filepath.Join(listDir, areaName, "events.jsonl")}
}

// append writes ev, stamping its time if unset. Failures are returned for
// the caller to log; an event that cannot be written never stops work.
func (l *eventLog) append(ev Event) error {
	if l.muted.Load() {
		return nil
	}
	if ev.TS.IsZero() {
		ev.TS = time.Now()
	}
	if tap := l.tap.Load(); tap != nil {
		defer (*tap)(ev) // runs after the lock is released: the tap may append
	}
	line, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		// Through fsroot: no link followed, never a file with other hard
		// links, made 0600.
		f, err := fsroot.OpenFile(l.list, l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
		if err != nil {
			return err
		}
		l.f = f
	}
	_, err = l.f.Write(line)
	return err
}

func (l *eventLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// AppendEvent appends one event to the log of the list at listDir. It is
// what taskd commands other than the daemon use. An event of a child that
// its parent monitors through a handoff is mirrored into the parent's
// stream, as the daemon mirrors the events it logs (cliMirror).
func AppendEvent(listDir string, ev Event) error {
	l := newEventLog(listDir)
	defer l.close()
	if ev.List == "" {
		ev.List = filepath.Base(listDir)
	}
	if m, ok := cliMonitor(listDir, ev); ok {
		a := &aceList{monitors: map[string]monitor{ev.Task: m}}
		tap := func(ev Event) { a.mirror(l, ev) }
		l.tap.Store(&tap)
	}
	return l.append(ev)
}

// ReadEvents reads the event log of the list at listDir. A missing log is
// empty. A line that does not parse (it cannot be torn, but a person may
// have edited the file) is returned as an error together with the events
// read so far.
func ReadEvents(listDir string) ([]Event, error) {
	f, err := fsroot.OpenFile(listDir, filepath.Join(areaName, "events.jsonl"), os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeEvents(f)
}

func decodeEvents(r io.Reader) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	return out, sc.Err()
}
