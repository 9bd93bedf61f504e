package ui

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/held"
	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/taskfile"
)

// A reader is the feed's knowledge of the root: a status.Tracker per
// list, what changed since the last flush, and the transcript it follows.
type reader struct {
	opt      Options
	watch    func(string) error // nil: nothing is watched
	unwatch  func(string) error
	trackers map[string]*status.Tracker // by list id
	lists    map[string]status.List     // as last read, attended
	failed   map[string]string          // lists that cannot be read, and why
	held     []held.Task
	pauses   pausefile.Record // the root's paused profiles
	pausesAt time.Time        // when they were read
	daemon   Daemon
	problem  string // what the view should know about the feed itself

	// What changed since the last flush.
	all     bool                       // everything (events lost)
	rescan  bool                       // the root's lists
	resend  bool                       // the daemon or the pauses
	sync    map[string]bool            // the lists whose directories changed
	relink  map[string]bool            // the lists whose notes of refusal changed
	changed map[string]map[string]bool // task files, by list
	grown   bool                       // the followed run folder, or its task
	retold  bool                       // the followed task's file

	fol   *following
	costs *costs
}

func newReader(opt Options) *reader {
	r := &reader{opt: opt, trackers: map[string]*status.Tracker{}, lists: map[string]status.List{}, failed: map[string]string{},
		sync: map[string]bool{}, relink: map[string]bool{}, changed: map[string]map[string]bool{}, costs: newCosts(opt.Root)}
	r.costs.at(opt.Now())
	r.checkDaemon()
	r.checkPauses(opt.Now())
	return r
}

// addWatch watches path, and reports whether it could.
func (r *reader) addWatch(path string) bool {
	return r.watch != nil && r.watch(path) == nil
}

func (r *reader) removeWatch(path string) {
	if r.unwatch != nil {
		r.unwatch(path)
	}
}

// shown reports whether the view shows list id.
func (r *reader) shown(id string) bool {
	return len(r.opt.Lists) == 0 || slices.Contains(r.opt.Lists, id)
}

// note records what event ev says has changed, and reports whether it is
// anything the view shows.
func (r *reader) note(ev fsnotify.Event) bool {
	root := r.opt.Root
	dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return false
	}
	parts := strings.Split(rel, string(filepath.Separator))
	switch {
	case rel == ".":
		switch {
		case name == ".taskd.lock":
			r.resend = r.checkDaemon() || r.resend
			return r.resend
		case name == pausefile.Name:
			r.resend = r.checkPauses(time.Now()) || r.resend
			return r.resend
		case strings.HasPrefix(name, "."):
			return false
		}
		r.rescan = true
		return true
	case len(parts) == 1 && r.trackers[parts[0]] != nil:
		list := parts[0]
		if id, ok := strings.CutSuffix(name, ".json"); ok && taskfile.ValidID(id) {
			if r.changed[list] == nil {
				r.changed[list] = map[string]bool{}
			}
			r.changed[list][id] = true
			if r.fol != nil && r.fol.k == (key{list, id}) {
				r.grown, r.retold = true, true
			}
			return true
		}
		if name == area.Name {
			r.watchList(list) // made after the list
			r.relink[list] = true
			return true
		}
		if !strings.HasPrefix(name, ".") && !strings.HasSuffix(name, ".lock") {
			r.sync[list] = true // a file whose name is not a task id
			return true
		}
	case len(parts) == 2 && parts[1] == area.Name && r.trackers[parts[0]] != nil:
		if name == "rejected" {
			r.addWatch(ev.Name)
			r.relink[parts[0]] = true
			return true
		}
	case len(parts) == 3 && parts[1] == area.Name && parts[2] == "rejected":
		r.relink[parts[0]] = true
		return true
	case r.fol != nil && dir == r.fol.watched:
		r.grown = true
		return true
	}
	return false
}

// watchList watches list id's directory, its .taskd and the notes of
// refusal in it.
func (r *reader) watchList(id string) {
	path := filepath.Join(r.opt.Root, id)
	r.addWatch(path)
	r.addWatch(filepath.Join(path, area.Name))
	r.addWatch(area.RejectedDir(path))
}

// scan reads which lists the root has: a new one is read and watched, one
// gone is forgotten.
func (r *reader) scan() {
	entries, err := fsroot.ReadDirectory(r.opt.Root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		r.failed[""] = err.Error()
		return
	}
	delete(r.failed, "")
	seen := map[string]bool{}
	for _, e := range entries {
		id := e.Name()
		if !e.IsDir() || strings.HasPrefix(id, ".") || !r.shown(id) {
			continue
		}
		seen[id] = true
		if r.trackers[id] != nil {
			continue
		}
		r.watchList(id) // before it is read: no change is missed
		tr, err := status.NewTracker(r.opt.Root, id, r.opt.All)
		if err != nil {
			r.failed[id] = err.Error()
			continue
		}
		delete(r.failed, id)
		tr.SetPauses(r.pauses)
		r.trackers[id] = tr
		r.set(id, tr.List())
	}
	for id := range r.trackers {
		if !seen[id] {
			r.removeWatch(filepath.Join(r.opt.Root, id))
			delete(r.trackers, id)
			delete(r.lists, id)
			r.costs.forget(id)
		}
	}
	for id := range r.failed {
		if id != "" && !seen[id] {
			delete(r.failed, id)
		}
	}
}

// flush reads what changed since the last flush and reports whether the
// lists and the transcript followed changed.
func (r *reader) flush() (lists, transcript bool) {
	if r.all {
		r.all = false
		for id, tr := range r.trackers {
			tr.Reload()
			r.set(id, tr.List())
		}
		r.scan()
		r.changed, r.sync, r.relink = map[string]map[string]bool{}, map[string]bool{}, map[string]bool{}
		r.grown = r.fol != nil
		lists = true
	}
	if r.rescan {
		r.rescan, lists = false, true
		r.scan()
	}
	if r.resend {
		r.resend, lists = false, true
	}
	touched := map[string]bool{}
	for id := range r.sync {
		if tr := r.trackers[id]; tr != nil {
			tr.Sync()
			touched[id] = true
		}
	}
	for id, ids := range r.changed {
		if tr := r.trackers[id]; tr != nil {
			for tid := range ids {
				tr.Update(tid)
			}
			touched[id] = true
		}
	}
	for id := range r.relink {
		touched[id] = r.trackers[id] != nil
	}
	for id, ok := range touched {
		if ok {
			r.set(id, r.trackers[id].List())
			lists = true
		}
	}
	clear(r.sync)
	clear(r.changed)
	clear(r.relink)
	transcript, r.grown = r.grown, false
	if transcript {
		r.fol.read()
	}
	return lists, transcript
}

// retell reports whether the followed task's file changed since it was
// last described.
func (r *reader) retell() bool {
	told := r.retold
	r.retold = false
	return told && r.fol != nil
}

// describe tells what happened to the followed task (status.Describe).
func (r *reader) describe() detailMsg {
	if r.fol == nil {
		return detailMsg{}
	}
	k := r.fol.k
	l, ok := r.lists[k.list]
	if !ok {
		return detailMsg{k: k}
	}
	d, _ := status.Describe(r.opt.Root, &l, k.id, 0)
	return detailMsg{k: k, d: d}
}

// set keeps l as list id's read: its tasks the daemon holds marked, and
// those above a task that needs a person (status.Attend), its costs
// counted.
func (r *reader) set(id string, l status.List) {
	one := []status.List{l}
	status.Attend(one, r.held)
	r.lists[id] = one[0]
	r.costs.list(&one[0])
}

// checkDaemon reads whether a daemon serves the root and which tasks it
// holds, and reports whether that changed; the lists are marked again
// when the held tasks did.
func (r *reader) checkDaemon() bool {
	d := Daemon{}
	if r.opt.Daemon != nil {
		d = r.opt.Daemon()
	}
	var h []held.Task
	if r.opt.Held != nil {
		h = r.opt.Held()
	}
	changed := d != r.daemon
	r.daemon = d
	if !slices.EqualFunc(h, r.held, func(a, b held.Task) bool {
		return a.List == b.List && a.ID == b.ID && a.Reason == b.Reason && a.Retry.Equal(b.Retry)
	}) {
		r.held = h
		for id, tr := range r.trackers {
			r.set(id, tr.List())
		}
		changed = true
	}
	return changed
}

// checkPauses reads the root's pause file, and reports whether what it
// holds at now changed (a pause set, lifted, or ended since the last
// look): the lists are linked again then, each task a pause holds marked.
func (r *reader) checkPauses(now time.Time) bool {
	rec, err := pausefile.Read(r.opt.Root)
	if err != nil {
		rec = pausefile.Record{} // a bad file: no pause is shown, as taskd status does
	}
	if reflect.DeepEqual(liveProfiles(rec, now), liveProfiles(r.pauses, r.pausesAt)) {
		r.pauses, r.pausesAt = rec, now
		return false
	}
	r.pauses, r.pausesAt = rec, now
	for id, tr := range r.trackers {
		tr.SetPauses(rec)
		r.set(id, tr.List())
	}
	return true
}

// liveProfiles returns the profiles of rec whose pause lasts at now.
func liveProfiles(rec pausefile.Record, now time.Time) map[string]pausefile.Pause {
	out := map[string]pausefile.Pause{}
	for name, p := range rec.Profiles {
		if p.Until.IsZero() || p.Until.After(now) {
			out[name] = p
		}
	}
	return out
}

// snapshot is what the reader knows of the root, for the view.
func (r *reader) snapshot() *snapshot {
	s := &snapshot{daemon: r.daemon, problem: r.problem, failed: map[string]string{}, costs: r.costs.total(),
		pauses: liveProfiles(r.pauses, r.pausesAt)}
	for _, id := range slices.Sorted(maps.Keys(r.lists)) {
		s.lists = append(s.lists, r.lists[id])
	}
	for id, why := range r.failed {
		s.failed[id] = why
	}
	return s
}
