// Package task is taskd's model of a task's life: the states a task moves
// through, the events that move it, and Next, the one transition function
// every state change goes through. A task's Record is the part of
// metadata.taskd only the daemon writes (its state, attempt, times, error,
// result, pause, …), read once per observation (Load) and written only by
// this package: Apply applies an event with the whole record it leaves to
// a task file in memory (its state, its status and the record's fields
// that changed, every other key kept in place), End does so for the end
// of an attempt that ran, Store writes the record's fields alone. The
// caller writes the file durably and only then performs the effects Next
// returned, so an agent can only start once its claim is on disk.
//
// The package does no I/O and reads no clock: a state and an event give the
// next state and its effects, or ErrIllegal.
package task
