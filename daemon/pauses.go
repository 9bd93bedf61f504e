package daemon

// The root's pause file (package pausefile) records the profiles a usage
// limit paused: the daemon reads it when it starts and whenever it
// changes, so that a pause outlives a restart and taskd resume, which
// removes one, lifts it at once.

// syncPauses makes the daemon's pauses what the pause file says, and
// considers again the tasks a lifted pause held.
func (d *Daemon) syncPauses() {
	now := d.clock.Now()
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
	d.syncHolds(now)
}

// profileAgents is cfg.AgentsOf: what the pause file records of a
// profile's pause, so that taskd status knows which tasks it holds.
func (d *Daemon) profileAgents(profile string) (names []string, byDefault bool) {
	return d.cfg.AgentsOf(profile)
}
