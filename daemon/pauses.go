package daemon

import (
	"maps"
	"slices"
	"time"
)

// The root's pause file (package pausefile) records the profiles a usage
// limit paused: the daemon reads it when it starts and whenever it
// changes, so that a pause outlives a restart and taskd resume, which
// removes one, lifts it at once.

// syncPauses makes the daemon's pauses what the pause file says, and
// considers again the tasks a lifted pause held.
func (d *Daemon) syncPauses() {
	now := time.Now()
	lifted, err := d.pauses.Sync(now)
	if err != nil {
		d.log.Warn("read the pause file", "err", err)
		return
	}
	for _, profile := range lifted {
		d.log.Info("pause lifted", "profile", profile)
	}
	if len(lifted) > 0 {
		d.wakePaused(now)
	}
}

// profileAgents returns the agent names that run with profile (a task's
// metadata.taskd.agent, or taskd:<name> as its owner) and whether a task
// that names none does: what the pause file records, so that taskd status
// knows which tasks a profile's pause holds.
func (d *Daemon) profileAgents(profile string) (names []string, byDefault bool) {
	cfg := d.cfg
	candidates := slices.Concat(slices.Collect(maps.Keys(cfg.Profiles)), slices.Collect(maps.Keys(cfg.Agents)), slices.Collect(maps.Keys(cfg.AgentTypes)))
	slices.Sort(candidates)
	for _, name := range slices.Compact(candidates) {
		if p, err := cfg.ResolveAgent(name, true); err == nil && p.Name == profile {
			names = append(names, name)
		}
	}
	p, err := cfg.ResolveAgent("", false)
	return names, err == nil && p.Name == profile
}
