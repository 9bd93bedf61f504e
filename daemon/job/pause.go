package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// Pauses are the agent profiles paused by a usage limit: no agent of a
// paused profile starts until the pause ends (docs/agents.md). A limit
// that names its reset time pauses the profile until then; one that does
// not, for a backoff that doubles with each limit met in a row (the
// profile's limitBackoff to limitBackoffMax). An attempt of the profile
// that ends without a limit starts the backoff over. Each pause is
// recorded in the root's pause file (package pausefile), which a
// restarted daemon reads (Sync) and from which a person lifts a pause
// early (taskd resume); the task files say the same of the tasks it
// paused (metadata.taskd.pause and retryAt), and a pause found only there
// is restored too. Safe for concurrent use; the zero value and nil have
// no pauses and record nothing.
type Pauses struct {
	mu sync.Mutex
	m  map[string]*pause // by profile
	// file records the pauses; nil: they are not recorded.
	file *pauseRecorder
}

type pause struct {
	limit agent.Limit // the last limit met; Until is when the pause ends
	hits  int         // limits met in a row without a reset time
	// recorded is the end of the pause the file last said (as written or
	// read); a pause the file no longer records was lifted.
	recorded time.Time
}

// A pauseRecorder writes a daemon's pauses to its root's pause file.
type pauseRecorder struct {
	root string
	// agents says which agent names run with profile, and whether a task
	// that names none does (pausefile.Pause.Agents and Default).
	agents func(profile string) (names []string, byDefault bool)
	warn   func(error)
}

// NewPauses returns Pauses recorded in root's pause file. agents says
// which agent names run with a profile (and whether the default does), for
// taskd status; warn is told of a record that could not be written.
func NewPauses(root string, agents func(profile string) ([]string, bool), warn func(error)) *Pauses {
	return &Pauses{file: &pauseRecorder{root: root, agents: agents, warn: warn}}
}

// Hit records that an agent of profile prof met lim, and returns when the
// profile's agents may run again.
func (p *Pauses) Hit(prof *config.Profile, lim agent.Limit, now time.Time) time.Time {
	until := lim.ResetsAt
	if p == nil {
		if !until.After(now) {
			until = now.Add(prof.LimitBackoff)
		}
		return until
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ps := p.get(prof.Name)
	if !until.After(now) {
		ps.hits++
		d := prof.LimitBackoff << min(ps.hits-1, 20)
		until = now.Add(min(d, prof.LimitBackoffMax))
	}
	lim.Profile, lim.Until = prof.Name, until
	if until.After(ps.limit.Until) {
		ps.limit = lim
		p.mu.Unlock()
		p.record(prof.Name, lim, now)
		p.mu.Lock()
	}
	return until
}

// record writes profile's pause for lim to the pause file, and notes what
// the file now records. The caller does not hold p.mu: the write is made
// outside it, and a pause the file does not record yet is never taken for
// one lifted (Sync).
func (p *Pauses) record(profile string, lim agent.Limit, now time.Time) {
	f := p.file
	if f == nil {
		return
	}
	rec := pausefile.Pause{Reason: LimitReason(lim), By: pausefile.ByLimit, Since: now, Until: lim.Until, Limit: &lim}
	if f.agents != nil {
		rec.Agents, rec.Default = f.agents(profile)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := pausefile.Update(ctx, f.root, now, func(r *pausefile.Record) error {
		if old, ok := r.Profiles[profile]; ok && !rec.Until.After(old.Until) && !old.Until.IsZero() {
			return errUnchanged // recorded already, as long or longer
		}
		if old, ok := r.Profiles[profile]; ok && old.Until.After(now) {
			rec.Since = old.Since
		}
		if r.Profiles == nil {
			r.Profiles = map[string]pausefile.Pause{}
		}
		r.Profiles[profile] = rec
		return nil
	})
	switch {
	case err == nil || errors.Is(err, errUnchanged):
		p.mu.Lock()
		if ps := p.get(profile); lim.Until.After(ps.recorded) {
			ps.recorded = lim.Until
		}
		p.mu.Unlock()
	case f.warn != nil:
		f.warn(fmt.Errorf("record the pause of profile %s: %w", profile, err))
	}
}

// errUnchanged leaves the pause file as it is.
var errUnchanged = errors.New("unchanged")

// LimitReason is a usage limit's pause in words, as taskd status shows it
// on the tasks the pause holds.
func LimitReason(lim agent.Limit) string {
	if lim.ResetsAt.IsZero() {
		return lim.Message
	}
	return lim.Message + " (resets " + lim.ResetsAt.Local().Format("Jan 2 15:04 MST") + ")"
}

// Sync makes the pauses what the pause file says at now: a pause it
// records that is not known (a restarted daemon's) is restored, and one
// it recorded that it no longer records (taskd resume removed it, or
// shortened it) is lifted. A pause not recorded yet (its write under way,
// or failed) is never lifted. It returns the profiles lifted.
func (p *Pauses) Sync(now time.Time) (lifted []string, err error) {
	if p == nil || p.file == nil {
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r, err := pausefile.Read(p.file.root)
	if err != nil {
		return nil, err
	}
	for name, rec := range r.Profiles {
		if !rec.Until.After(now) {
			continue
		}
		ps := p.get(name)
		if rec.Until.After(ps.limit.Until) {
			lim := agent.Limit{Message: rec.Reason}
			if rec.Limit != nil {
				lim = *rec.Limit
			}
			lim.Profile, lim.Until = name, rec.Until
			ps.limit = lim
		}
		ps.recorded = rec.Until
	}
	for name, ps := range p.m {
		rec, ok := r.Profiles[name]
		if ps.limit.Until.After(now) && !ps.recorded.IsZero() && (!ok || rec.Until.Before(ps.recorded)) {
			ps.limit, ps.hits, ps.recorded = agent.Limit{}, 0, time.Time{}
			lifted = append(lifted, name)
		}
	}
	return lifted, nil
}

// Restore records a pause read from a paused task's file, unless the
// profile is already known to be paused for longer.
func (p *Pauses) Restore(profile string, lim agent.Limit) {
	if p == nil || profile == "" || lim.Until.IsZero() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ps := p.get(profile)
	if lim.Until.After(ps.limit.Until) {
		lim.Profile = profile
		ps.limit = lim
		if lim.Until.After(ps.recorded) && lim.Until.After(time.Now()) {
			p.mu.Unlock()
			p.record(profile, lim, time.Now())
			p.mu.Lock()
		}
	}
}

// Clear says an attempt of profile ended without meeting a limit: the
// next limit's backoff starts from the first step. A pause under way
// stays.
func (p *Pauses) Clear(profile string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ps := p.m[profile]; ps != nil {
		ps.hits = 0
	}
}

// Paused returns the limit that pauses profile at now, or nil.
func (p *Pauses) Paused(profile string, now time.Time) *agent.Limit {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ps := p.m[profile]; ps != nil && ps.limit.Until.After(now) {
		l := ps.limit
		return &l
	}
	return nil
}

// Next returns the earliest end of a pause after now, or the zero time.
func (p *Pauses) Next(now time.Time) time.Time {
	var next time.Time
	if p == nil {
		return next
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ps := range p.m {
		if u := ps.limit.Until; u.After(now) && (next.IsZero() || u.Before(next)) {
			next = u
		}
	}
	return next
}

func (p *Pauses) get(profile string) *pause {
	if p.m == nil {
		p.m = map[string]*pause{}
	}
	ps := p.m[profile]
	if ps == nil {
		ps = &pause{}
		p.m[profile] = ps
	}
	return ps
}

// pausedError keeps an agent from starting: its profile is paused.
type pausedError struct{ limit *agent.Limit }

func (e *pausedError) Error() string {
	return fmt.Sprintf("%v until %s: %s", agent.ErrPaused, e.limit.Until.Local().Format("Jan 2 15:04"), e.limit.Message)
}

func (e *pausedError) Unwrap() error { return agent.ErrPaused }

// pauseGate lets an agent start only while its profile is not paused,
// once the gate it wraps has let it.
type pauseGate struct {
	agent.Gate
	pauses  *Pauses
	profile string
	now     func() time.Time
}

func (g pauseGate) Enter(ctx context.Context) error {
	if err := g.Gate.Enter(ctx); err != nil {
		return err
	}
	if lim := g.pauses.Paused(g.profile, g.now()); lim != nil {
		return &pausedError{limit: lim}
	}
	return nil
}

// PauseOf reads the pause a paused task's file records
// (metadata.taskd.pause), or false.
func PauseOf(t *taskfile.Task) (agent.Limit, bool) {
	return PauseIn(task.RecordOf(t))
}

// PauseIn is PauseOf for a record already read.
func PauseIn(rec task.Record) (agent.Limit, bool) {
	return pauseOf(rec.Pause)
}

// pauseOf reads a record's pause (metadata.taskd.pause).
func pauseOf(p *taskfile.Object) (agent.Limit, bool) {
	var lim agent.Limit
	if p == nil {
		return lim, false
	}
	if json.Unmarshal(taskfile.AppendJSON(nil, p), &lim) != nil || lim.Until.IsZero() {
		return lim, false
	}
	return lim, true
}

// asValue is v (a struct) as a task file holds it.
func asValue(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	val, err := taskfile.ParseValue(data)
	if err != nil {
		return nil
	}
	return val
}
