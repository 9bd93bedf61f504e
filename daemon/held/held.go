// Package held keeps the tasks a daemon holds back because it cannot write
// (a full disk, a failing or read-only file system, a lock nobody can
// take): for each, the reason, since when, and when taskd tries again. A
// held task starts no agent, and an attempt that already ran keeps its
// result in memory until the write that records it succeeds.
//
// Where the reason is kept: the task file cannot say it (writing it is
// what fails), and nor can anything else on the task list's file system.
// The daemon keeps it in memory and publishes it in a status file on
// another file system, the user's runtime directory ($XDG_RUNTIME_DIR,
// else /run/user/<uid>, a tmpfs on most systems; else a directory of the
// user's own under the system's temporary directory), where taskd status
// reads it. The file names the daemon's process, so a file a dead daemon
// left is ignored; it is removed when the daemon stops, and the next
// daemon for the root removes one a killed daemon left. When the task
// list and the runtime directory share a full file system, the reason
// stays in the daemon's memory and its log. The same directory keeps the
// results of attempts whose run folders cannot take them (package agent,
// kept.go), until their ends are recorded: RuntimeDir.
package held

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/taskd/taskd/internal/fsroot"
)

// A Task is one held task.
type Task struct {
	List   string    `json:"list"`
	ID     string    `json:"id"`
	Reason string    `json:"reason"`         // why it is held: the write that failed, and how
	Since  time.Time `json:"since"`          // when it was first held
	Retry  time.Time `json:"retry,omitzero"` // when taskd tries again
	Tries  int       `json:"tries"`          // failed tries so far
}

// statusFile is the status file's content.
type statusFile struct {
	PID   int    `json:"pid"`  // the daemon's process
	Root  string `json:"root"` // the task root it serves
	Tasks []Task `json:"tasks"`
}

type key struct{ list, id string }

// A Registry is a daemon's held tasks. It is safe for concurrent use.
type Registry struct {
	root string
	path string // the status file; "" when none can be kept

	mu      sync.Mutex // protects the fields below
	tasks   map[key]*Task
	written bool  // the status file exists
	werr    error // the last failure to write it, reported once
	onError func(error)
}

// New returns the registry of a daemon serving root; onError is told (once
// per kind of failure) when the status file cannot be written.
func New(root string, onError func(error)) *Registry {
	path, err := StatusPath(root)
	if err != nil && onError != nil {
		onError(err)
	}
	return &Registry{root: root, path: path, tasks: map[key]*Task{}, onError: onError}
}

// Hold records that task id of list is held for reason until retry (its
// next try). It reports whether the task was not held before.
func (r *Registry) Hold(list, id, reason string, retry time.Time) (first bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := key{list, id}
	t := r.tasks[k]
	if t == nil {
		t = &Task{List: list, ID: id, Since: time.Now()}
		r.tasks[k] = t
		first = true
	}
	t.Reason, t.Retry = reason, retry
	t.Tries++
	r.publish()
	return first
}

// Release records that task id of list is no longer held; it reports
// whether it was.
func (r *Registry) Release(list, id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := key{list, id}
	if r.tasks[k] == nil {
		return false
	}
	delete(r.tasks, k)
	r.publish()
	return true
}

// Get returns task id of list if it is held.
func (r *Registry) Get(list, id string) (Task, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.tasks[key{list, id}]; t != nil {
		return *t, true
	}
	return Task{}, false
}

// Tasks returns the held tasks, by list and id.
func (r *Registry) Tasks() []Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sorted()
}

func (r *Registry) sorted() []Task {
	out := make([]Task, 0, len(r.tasks))
	for _, t := range r.tasks {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b Task) int { return cmp.Or(cmp.Compare(a.List, b.List), cmp.Compare(a.ID, b.ID)) })
	return out
}

// RemoveLeft removes the status file (and a temporary file of a torn
// write) a daemon that served root before left behind: one killed, which
// could not remove it, and which nothing would replace while this daemon
// holds no task. The caller serves root alone (it holds the root's daemon
// lock), so no live daemon owns the file.
func (r *Registry) RemoveLeft() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.path == "" || r.written {
		return
	}
	tmps, _ := filepath.Glob(r.path + ".tmp*") // a write the kill tore
	for _, tmp := range tmps {
		os.Remove(tmp)
	}
	data, err := fsroot.ReadRegular(r.path)
	if err != nil {
		return // none, or not a file this package wrote
	}
	var sf statusFile
	if json.Unmarshal(data, &sf) == nil && sf.Root != r.root {
		return // another root's, whose name is the same hash
	}
	if err := os.Remove(r.path); err != nil && !errors.Is(err, fs.ErrNotExist) && r.onError != nil {
		r.onError(fmt.Errorf("remove the status file a stopped daemon left: %w", err))
	}
}

// Close removes the status file: a stopped daemon holds nothing.
func (r *Registry) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.path != "" && r.written {
		os.Remove(r.path)
		r.written = false
	}
}

// publish writes the status file (the caller holds r.mu): replaced whole,
// removed when nothing is held.
func (r *Registry) publish() {
	if r.path == "" {
		return
	}
	var err error
	if len(r.tasks) == 0 {
		if r.written {
			if err = os.Remove(r.path); errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
			r.written = err != nil
		}
	} else {
		data, _ := json.MarshalIndent(statusFile{PID: os.Getpid(), Root: r.root, Tasks: r.sorted()}, "", "  ")
		if err = WriteFile(r.path, append(data, '\n')); err == nil {
			r.written = true
		}
	}
	if err != nil && (r.werr == nil || r.werr.Error() != err.Error()) && r.onError != nil {
		r.onError(fmt.Errorf("write the held tasks' status file: %w", err))
	}
	r.werr = err
}

// WriteFile replaces path, a file of the runtime directory, with data
// (mode 0600) through a temporary file beside it, synced before it is
// renamed: readers see the old file or the new one, never a part.
func WriteFile(path string, data []byte) error {
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	f, err := fsroot.OpenRegular(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Read returns the tasks the daemon serving root holds, as its status
// file says, and the daemon's process id (0 and nothing when no file is
// there). The caller checks that the process still serves root.
func Read(root string) (pid int, tasks []Task, err error) {
	path, err := StatusPath(root)
	if err != nil {
		return 0, nil, err
	}
	data, err := fsroot.ReadRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, err
	}
	var sf statusFile
	if err := json.Unmarshal(data, &sf); err != nil {
		return 0, nil, fmt.Errorf("%s: %w", path, err)
	}
	if sf.Root != root {
		return 0, nil, nil
	}
	return sf.PID, sf.Tasks, nil
}

// StatusPath returns the status file of a daemon serving root: in the
// user's runtime directory (see the package comment), named after root.
func StatusPath(root string) (string, error) {
	dir, err := RuntimeDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, "held-"+hex.EncodeToString(sum[:8])+".json"), nil
}

// RuntimeDir returns taskd's directory in the user's runtime directory,
// making it (0700) if need be: $XDG_RUNTIME_DIR/taskd, else
// /run/user/<uid>/taskd, else <temporary directory>/taskd-<uid>. A
// directory that is a link, another user's, or open to others is refused.
func RuntimeDir() (string, error) {
	uid := os.Geteuid()
	var candidates []string
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		candidates = append(candidates, filepath.Join(d, "taskd"))
	}
	candidates = append(candidates,
		filepath.Join("/run/user", strconv.Itoa(uid), "taskd"),
		filepath.Join(os.TempDir(), "taskd-"+strconv.Itoa(uid)))
	var errs []error
	for _, dir := range candidates {
		if parent := filepath.Dir(dir); parent != os.TempDir() {
			if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
				continue
			}
		}
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			errs = append(errs, err)
			continue
		}
		fi, err := os.Lstat(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || !ok || int(st.Uid) != uid {
			errs = append(errs, fmt.Errorf("%s is not a private directory of this user", dir))
			continue
		}
		return dir, nil
	}
	return "", fmt.Errorf("no runtime directory for taskd's status: %w", errors.Join(errs...))
}
