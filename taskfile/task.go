package taskfile

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/taskd/taskd/internal/jsonorder"
)

// Task statuses, as Claude Code defines them.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
)

// MaxSize is the largest task file taskd reads.
const MaxSize = 1 << 20

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// ValidID reports whether id can name a task file (<id>.json).
func ValidID(id string) bool { return idPattern.MatchString(id) }

// A Task is one task file in Claude Code's format. The well-known fields are
// typed; everything else in the file, including unknown top-level fields and
// every metadata key, is kept with its position and written back unchanged.
//
// A Task is not safe for concurrent use.
type Task struct {
	ID          string
	Subject     string
	Description string
	ActiveForm  string
	Status      string
	Owner       string
	Blocks      []string
	BlockedBy   []string
	Metadata    *Object // nil when the file has none

	doc *Object // the file as read: key order and unknown fields
	raw []byte  // the bytes as read, nil for a task not read from a file
	// unsynced is the directory fsync a write made with DeferDirSync
	// asked for and did not wait for (Dir.Sync); 0 for none.
	unsynced uint64
}

// known lists the typed fields in the order Claude Code writes them; a
// field missing from a file is appended in this order.
var known = []string{"id", "subject", "description", "activeForm", "owner", "status", "blocks", "blockedBy", "metadata"}

// Parse decodes a task file's contents. name is used in errors only (usually
// the file's path); stem, when not empty, is the file name without ".json"
// and must equal the task's id if the file has one. Errors are
// *BadFileError.
func Parse(data []byte, name, stem string) (*Task, error) {
	if len(data) > MaxSize {
		return nil, badFile(name, ErrTooLarge, "Task files hold at most 1 MiB; move large inputs into separate files and reference them (for example with /read).",
			"the file is %d bytes, larger than the 1 MiB limit", len(data))
	}
	v, err := ParseValue(data)
	if err != nil {
		return nil, badFile(name, ErrInvalidJSON, "Fix the JSON syntax (for example with `jq . FILE`); taskd picks the file up again once it parses.",
			"invalid JSON: %v", err)
	}
	doc, ok := v.(*Object)
	if !ok {
		return nil, badFile(name, ErrNotObject, `A task file holds one JSON object, such as {"subject": "...", "owner": "taskd"}.`,
			"the file holds %s, not a JSON object", TypeName(v))
	}
	t := &Task{doc: doc, raw: data}
	if err := t.fromDoc(name, stem); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Task) fromDoc(name, stem string) error {
	str := func(key string, dst *string) error {
		v, ok := t.doc.Get(key)
		if !ok {
			return nil
		}
		s, ok := v.(string)
		if !ok {
			return badFile(name, ErrWrongType, fmt.Sprintf("Make %q a JSON string.", key), "field %q is %s, want a string", key, TypeName(v))
		}
		*dst = s
		return nil
	}
	strs := func(key string, dst *[]string) error {
		v, ok := t.doc.Get(key)
		if !ok {
			return nil
		}
		arr, ok := v.([]any)
		if !ok {
			return badFile(name, ErrWrongType, fmt.Sprintf(`Make %q an array of task ids as strings, such as ["3", "4"].`, key), "field %q is %s, want an array of strings", key, TypeName(v))
		}
		out := make([]string, len(arr))
		for i, e := range arr {
			s, ok := e.(string)
			if !ok {
				return badFile(name, ErrWrongType, fmt.Sprintf(`Write every id in %q as a string, such as "3".`, key), "element %d of %q is %s, want a string", i, key, TypeName(e))
			}
			out[i] = s
		}
		*dst = out
		return nil
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"id", &t.ID}, {"subject", &t.Subject}, {"description", &t.Description}, {"activeForm", &t.ActiveForm}, {"owner", &t.Owner}, {"status", &t.Status}} {
		if err := str(f.key, f.dst); err != nil {
			return err
		}
	}
	if t.doc.Has("status") {
		switch t.Status {
		case StatusPending, StatusInProgress, StatusCompleted:
		default:
			return badFile(name, ErrWrongType, `Set "status" to "pending" (or remove it) to submit the task.`, `field "status" is %q, want "pending", "in_progress" or "completed"`, t.Status)
		}
	}
	if err := strs("blocks", &t.Blocks); err != nil {
		return err
	}
	if err := strs("blockedBy", &t.BlockedBy); err != nil {
		return err
	}
	if v, ok := t.doc.Get("metadata"); ok {
		md, isObj := v.(*Object)
		if !isObj {
			return badFile(name, ErrWrongType, `Make "metadata" a JSON object, such as {"taskd": {}}.`, `field "metadata" is %s, want an object`, TypeName(v))
		}
		t.Metadata = md
	}
	if !t.doc.Has("id") && stem != "" {
		t.ID = stem // as Claude Code does: the file name is the id
	}
	if t.doc.Has("id") && stem != "" && t.ID != stem {
		return badFile(name, ErrIDMismatch, fmt.Sprintf(`Rename the file to %s.json or set "id" to %q; Claude Code loses track of tasks whose id and file name differ.`, t.ID, stem),
			"the id %q does not match the file name %s.json", t.ID, stem)
	}
	return nil
}

// FillDefaults fills in what Claude Code would have written for a task that
// a person wrote by hand: id (from the file stem), status pending, an
// activeForm from the subject, and empty blocks and blockedBy. It reports
// whether anything changed.
func (t *Task) FillDefaults(stem string) bool {
	changed := false
	if t.ID == "" && !t.has("id") {
		t.ID, changed = stem, true
	}
	if !t.has("subject") && t.Subject == "" {
		t.Subject, changed = defaultSubject(t), true
	}
	if !t.has("status") && t.Status == "" {
		t.Status, changed = StatusPending, true
	}
	if !t.has("activeForm") && t.ActiveForm == "" {
		t.ActiveForm, changed = t.Subject, true
	}
	if !t.has("description") {
		changed = true // written as "" so Claude Code's schema accepts the file
	}
	if t.Blocks == nil {
		t.Blocks, changed = []string{}, true
	}
	if t.BlockedBy == nil {
		t.BlockedBy, changed = []string{}, true
	}
	return changed
}

func defaultSubject(t *Task) string {
	text := t.Description
	if td := t.Metadata.Object("taskd"); td != nil {
		if p, ok := td.String("prompt"); ok && p != "" {
			text = p
		}
	}
	text = strings.TrimSpace(text)
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	// Count code points as the file holds them: a lone surrogate is one.
	cut, n := 0, 0
	for i := 0; i < len(text); n++ {
		if n == 79 {
			cut = i
		}
		_, size := jsonorder.DecodeRune(text[i:])
		i += size
	}
	if n > 80 {
		text = text[:cut] + "…"
	}
	if text == "" {
		return "task " + t.ID
	}
	return text
}

func (t *Task) has(key string) bool { return t.doc != nil && t.doc.Has(key) }

// Has reports whether the file the task was read from has the top-level key.
func (t *Task) Has(key string) bool { return t.has(key) }

// Raw returns the bytes the task was parsed from, or nil for a new task.
func (t *Task) Raw() []byte { return t.raw }

// Extra returns an unknown top-level field as parsed.
func (t *Task) Extra(key string) (any, bool) {
	for _, k := range known {
		if k == key {
			return nil, false
		}
	}
	return t.doc.Get(key)
}

// Clone returns a deep copy of t.
func (t *Task) Clone() *Task {
	c := *t
	c.Blocks = append([]string(nil), t.Blocks...)
	c.BlockedBy = append([]string(nil), t.BlockedBy...)
	if t.Blocks != nil && c.Blocks == nil {
		c.Blocks = []string{}
	}
	if t.BlockedBy != nil && c.BlockedBy == nil {
		c.BlockedBy = []string{}
	}
	c.Metadata = t.Metadata.Clone()
	c.doc = t.doc.Clone() // only its key order and unknown fields are used
	return &c
}

// Marshal encodes the task as Claude Code writes task files (see
// AppendJSON). Keys keep the order they had in the file; the well-known
// fields a file lacked are appended in Claude Code's order, owner and
// metadata only when set.
func (t *Task) Marshal() []byte {
	_, data := t.encode()
	return data
}

// encode returns the object Marshal writes and its bytes.
func (t *Task) encode() (*Object, []byte) {
	out := NewObject()
	out.Grow(t.doc.Len() + len(known))
	for k, v := range t.doc.All() {
		if kv, ok := t.knownValue(k, true); ok {
			out.Set(k, kv)
		} else if !isKnown(k) {
			out.Set(k, v)
		}
	}
	for _, k := range known {
		if out.Has(k) {
			continue
		}
		if v, ok := t.knownValue(k, false); ok {
			out.Set(k, v)
		}
	}
	return out, AppendJSON(make([]byte, 0, len(t.raw)+64), out)
}

// Changed reports whether Marshal would produce bytes different from the
// ones the task was read from.
func (t *Task) Changed() bool {
	return t.raw == nil || !bytes.Equal(t.Marshal(), t.raw)
}

func isKnown(k string) bool {
	for _, n := range known {
		if n == k {
			return true
		}
	}
	return false
}

// knownValue returns the value to write for a well-known field. present says
// whether the file had the key: a key the file had is always written; an
// absent optional one only when set.
func (t *Task) knownValue(k string, present bool) (any, bool) {
	switch k {
	case "id":
		return t.ID, true
	case "subject":
		return t.Subject, true
	case "description":
		return t.Description, true
	case "activeForm":
		return t.ActiveForm, true
	case "owner":
		return t.Owner, present || t.Owner != ""
	case "status":
		if t.Status == "" {
			return StatusPending, true
		}
		return t.Status, true
	case "blocks":
		return t.Blocks, true
	case "blockedBy":
		return t.BlockedBy, true
	case "metadata":
		if t.Metadata == nil {
			return nil, false
		}
		return t.Metadata, true
	}
	return nil, false
}

// EnsureMetadata returns the task's metadata, creating an empty object if
// the task has none.
func (t *Task) EnsureMetadata() *Object {
	if t.Metadata == nil {
		t.Metadata = NewObject()
	}
	return t.Metadata
}
