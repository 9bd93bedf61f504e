package job

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/taskfile"
)

// Pauses are the agent profiles paused by a usage limit: no agent of a
// paused profile starts until the pause ends (docs/agents.md). A limit
// that names its reset time pauses the profile until then; one that does
// not, for a backoff that doubles with each limit met in a row (the
// profile's limitBackoff to limitBackoffMax). An attempt of the profile
// that ends without a limit starts the backoff over. The task files say
// the same (a paused task's metadata.taskd.pause and retryAt), so a
// restarted daemon restores the pauses from them. Safe for concurrent
// use; the zero value and nil have no pauses.
type Pauses struct {
	mu sync.Mutex
	m  map[string]*pause // by profile
}

type pause struct {
	limit agent.Limit // the last limit met; Until is when the pause ends
	hits  int         // limits met in a row without a reset time
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
	}
	return until
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
}

func (g pauseGate) Enter(ctx context.Context) error {
	if err := g.Gate.Enter(ctx); err != nil {
		return err
	}
	if lim := g.pauses.Paused(g.profile, time.Now()); lim != nil {
		return &pausedError{limit: lim}
	}
	return nil
}

// PauseOf reads the pause a paused task's file records
// (metadata.taskd.pause), or false.
func PauseOf(t *taskfile.Task) (agent.Limit, bool) {
	return pauseIn(t.Metadata.Object("taskd"))
}

// pauseIn reads the pause metadata.taskd m records.
func pauseIn(m *taskfile.Object) (agent.Limit, bool) {
	var lim agent.Limit
	v, ok := m.Get("pause")
	if !ok || v == nil {
		return lim, false
	}
	if json.Unmarshal(taskfile.AppendJSON(nil, v), &lim) != nil || lim.Until.IsZero() {
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
