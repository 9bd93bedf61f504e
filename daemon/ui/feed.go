package ui

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/fsnotify/fsnotify"
	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/daemon/held"
	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/taskfile"
)

// How the feed paces itself.
const (
	// settle is how long the feed gathers file events before it reads
	// what they name: a burst of writes costs one read of each file.
	settle = 100 * time.Millisecond
	// tickEvery is how often the clock of the view moves (ages, cost per
	// minute); the daemon's state and its held tasks are read every
	// other tick. Nothing else is read without a file event.
	tickEvery = time.Second
	// transcriptTail is how much of the end of a transcript the view
	// reads when it starts following one.
	transcriptTail = 64 << 10
)

// A feed reads the root for the view and sends it what changed: a
// snapshot of the lists whenever a task file changes (reading again only
// that file), the selected task's transcript as it grows, and the clock.
// It watches the root, each list, each list's notes of refusal and the
// run folder of the task followed.
type feed struct {
	opt     Options
	follows chan key      // Follow's requests; the latest wins
	rereads chan struct{} // Reread's
}

func newFeed(opt Options) *feed {
	return &feed{opt: opt, follows: make(chan key, 1), rereads: make(chan struct{}, 1)}
}

// Reread asks the feed to read every file again. It never blocks.
func (f *feed) Reread() {
	select {
	case f.rereads <- struct{}{}:
	default:
	}
}

// Follow asks the feed to follow task k's transcript instead of the one
// it follows (a key of a list, none). It never blocks.
func (f *feed) Follow(k key) {
	for {
		select {
		case f.follows <- k:
			return
		default:
			select {
			case <-f.follows:
			default:
			}
		}
	}
}

// run reads and watches until ctx ends, sending what it reads to send.
func (f *feed) run(ctx context.Context, send func(tea.Msg)) {
	r := newReader(f.opt)
	w, err := fsnotify.NewWatcher()
	if err == nil {
		defer w.Close()
		r.watch = w.Add
		r.unwatch = w.Remove
	} else {
		r.problem = "file events cannot be watched (" + err.Error() + "): press ctrl-r to read again"
	}
	watching := r.addWatch(f.opt.Root)
	r.scan()
	send(r.snapshot())

	var events <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		events, errs = w.Events, w.Errors
	}
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	var settled <-chan time.Time
	wake := func() {
		if settled == nil {
			settled = time.After(settle)
		}
	}
	ticks := 0
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			if r.note(ev) {
				wake()
			}
		case err := <-errs:
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				r.all = true // events were lost: read everything
				wake()
			}
		case <-f.rereads:
			r.all = true
			wake()
		case k := <-f.follows:
			r.follow(k)
			send(r.transcript())
			send(r.describe())
		case <-settled:
			settled = nil
			lists, transcript := r.flush()
			if lists {
				send(r.snapshot())
			}
			if transcript {
				send(r.transcript())
			}
			if r.retell() {
				send(r.describe())
			}
		case now := <-tick.C:
			if !watching && r.watch != nil && r.addWatch(f.opt.Root) {
				watching = true // the root has come since the view started
				r.rescan = true
				wake()
			}
			newDay := r.costs.at(now)
			if newDay {
				for id := range r.lists {
					l := r.lists[id]
					r.costs.list(&l)
				}
			}
			if ticks++; ticks%2 == 0 && (r.checkDaemon() || r.checkPauses(now)) || newDay {
				send(r.snapshot())
			}
			send(tickMsg(now))
		}
	}
}

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
	entries, err := os.ReadDir(r.opt.Root)
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
