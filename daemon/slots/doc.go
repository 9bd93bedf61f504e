// Package slots accounts for concurrency slots: how many agents may run at
// once, in all and per list. A Pool hands slots to tickets, each ticket one
// job of the daemon's that needs (or may need) a slot to start an agent.
//
// The daemon's loop decides which tasks start and takes a ticket for each;
// a slot given back by an agent that exited goes straight to the first
// ticket waiting for one, in the exiting job's goroutine, without a round
// trip through the loop, which may be busy reading the files of a burst of
// events. The loop is told (Pool.Kick) so that it prepares the next task
// ahead of the next free slot.
//
// A Pool is safe for concurrent use; its lock is held only while counting,
// never across I/O.
package slots
