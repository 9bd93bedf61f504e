package children

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// A Message is one entry of a task's inbox: a child's result, or a note
// sent with taskd child send.
type Message struct {
	From          string    `json:"from"`             // sender task id, or "user"
	TaskID        string    `json:"taskId,omitempty"` // the child whose result this is
	Name          string    `json:"name,omitempty"`   // the child's name
	Success       *bool     `json:"success,omitempty"`
	Summary       string    `json:"summary,omitempty"`
	Output        string    `json:"output,omitempty"`
	Error         string    `json:"error,omitempty"`
	PartialOutput string    `json:"partialOutput,omitempty"`
	Text          string    `json:"text,omitempty"` // taskd child send's message
	SentAt        time.Time `json:"sentAt"`

	file string // the message's file name, set when read
}

// An Inbox is a task's maildir: <list>/.taskd/inbox/<task-id>/{tmp,new,cur}.
// A message is written in tmp/ and renamed into new/, so readers never see
// part of one; consuming renames it from new/ into cur/, which exactly one
// reader can do. Inboxes are safe for concurrent use by any number of
// processes.
//
// Every file of an inbox is made and read through package fsroot: inside
// its list, following no link, private to the daemon's user.
type Inbox struct {
	base string // the list directory
	dir  string
	err  error // the id cannot name an inbox: every method fails with it
}

// InboxOf returns the inbox of task id in the list at listDir. An id that
// is not a task id gives an inbox whose every method fails with an error
// wrapping taskfile.ErrInvalidID.
func InboxOf(listDir, id string) *Inbox {
	ib := &Inbox{base: listDir, dir: area.InboxDir(listDir, id)}
	if !taskfile.ValidID(id) {
		ib.err = fmt.Errorf("inbox of %q: %w", id, taskfile.ErrInvalidID)
	}
	return ib
}

// Deliver puts m in the inbox under a unique name. With key set, the name is
// key and a second delivery under the same key (in new/ or already
// consumed into cur/) does nothing: deliveries can be retried after a crash.
func (ib *Inbox) Deliver(m Message, key string) error {
	if ib.err != nil {
		return ib.err
	}
	for _, sub := range []string{"tmp", "new", "cur"} {
		if err := fsroot.MkdirAll(ib.base, filepath.Join(ib.dir, sub)); err != nil {
			return err
		}
	}
	if m.SentAt.IsZero() {
		m.SentAt = time.Now()
	}
	name := key
	if name == "" {
		var r [6]byte
		rand.Read(r[:])
		name = fmt.Sprintf("%d.%s.%s", m.SentAt.UnixNano(), safeName(m.From), hex.EncodeToString(r[:]))
	} else {
		name = fmt.Sprintf("%d.%s", m.SentAt.UnixNano(), key)
		if ib.has(key) {
			return nil
		}
	}
	name += ".json"
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	tmp := filepath.Join(ib.dir, "tmp", name)
	f, err := fsroot.OpenFile(ib.base, tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return fsroot.Rename(ib.base, tmp, filepath.Join(ib.dir, "new", name))
}

// has reports whether a message delivered under key is in new/ or cur/.
func (ib *Inbox) has(key string) bool {
	for _, sub := range []string{"new", "cur"} {
		entries, _ := fsroot.ReadDir(ib.base, filepath.Join(ib.dir, sub))
		for _, e := range entries {
			if _, rest, ok := strings.Cut(e.Name(), "."); ok && strings.TrimSuffix(rest, ".json") == key {
				return true
			}
		}
	}
	return false
}

func safeName(s string) string {
	if s == "" {
		return "anon"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// Filter selects messages: From restricts the sender; LIFO takes the
// newest first instead of the oldest.
type Filter struct {
	From string
	LIFO bool
}

// Peek returns the unconsumed messages (new/) in order, without consuming
// them.
func (ib *Inbox) Peek(f Filter) ([]Message, error) {
	return ib.list("new", f)
}

// Consumed returns the messages already consumed (cur/), oldest first.
func (ib *Inbox) Consumed() ([]Message, error) {
	return ib.list("cur", Filter{})
}

func (ib *Inbox) list(sub string, f Filter) ([]Message, error) {
	if ib.err != nil {
		return nil, ib.err
	}
	entries, err := fsroot.ReadDir(ib.base, filepath.Join(ib.dir, sub))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names) // names start with the delivery time
	if f.LIFO {
		slices.Reverse(names)
	}
	var out []Message
	for _, n := range names {
		data, err := fsroot.ReadFile(ib.base, filepath.Join(ib.dir, sub, n), maxMessage)
		if err != nil {
			continue // consumed meanwhile
		}
		var m Message
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		if f.From != "" && m.From != f.From {
			continue
		}
		m.file = n
		out = append(out, m)
	}
	return out, nil
}

// Check consumes and returns one message matching f, or nil if there is
// none. It never blocks. Two processes checking at once never get the same
// message: consuming is a rename that only one can win.
func (ib *Inbox) Check(f Filter) (*Message, error) {
	msgs, err := ib.Peek(f)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		err := fsroot.Rename(ib.base, filepath.Join(ib.dir, "new", m.file), filepath.Join(ib.dir, "cur", m.file))
		if err == nil {
			return &m, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return nil, nil
}

// maxMessage bounds the size of one inbox message read.
const maxMessage = 16 << 20

// ErrNoMessage is returned by Receive when its wait ends without a message.
var ErrNoMessage = errors.New("no message")

// Receive consumes and returns one message matching f, waiting for one to
// arrive if there is none. It wakes on the file event of a delivery (no
// polling) and returns ErrNoMessage when ctx ends first.
func (ib *Inbox) Receive(ctx context.Context, f Filter) (*Message, error) {
	if ib.err != nil {
		return nil, ib.err
	}
	newDir := filepath.Join(ib.dir, "new")
	if err := fsroot.MkdirAll(ib.base, newDir); err != nil {
		return nil, err
	}
	fsroot.MkdirAll(ib.base, filepath.Join(ib.dir, "cur"))
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if err := w.Add(newDir); err != nil {
		return nil, err
	}
	for {
		// Checked after the watch is in place, so no delivery is missed.
		m, err := ib.Check(f)
		if m != nil || err != nil {
			return m, err
		}
		select {
		case <-ctx.Done():
			return nil, ErrNoMessage
		case _, ok := <-w.Events:
			if !ok {
				return nil, errors.New("inbox watcher closed")
			}
		case err := <-w.Errors:
			if err != nil && !errors.Is(err, fsnotify.ErrEventOverflow) {
				return nil, err
			}
		}
	}
}

// Send delivers text to the inbox of task to in dir, from task from (or
// "user"). The recipient must exist and not have ended. The caller logs
// the MessageSent event.
func Send(dir *taskfile.Dir, from, to, text string) error {
	if !taskfile.ValidID(to) {
		return fmt.Errorf("send to %q: %w", to, taskfile.ErrInvalidID)
	}
	t, err := dir.Read(to)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no task %s in %s", to, dir.Path())
	}
	if err != nil {
		return err
	}
	if s := task.Of(t); s.Ended() || t.Status == taskfile.StatusCompleted {
		return fmt.Errorf("task %s has ended (%s); it reads no more messages", to, cmp.Or(string(s), t.Status))
	}
	return InboxOf(dir.Path(), to).Deliver(Message{From: from, Text: text}, "")
}
