// Package task is taskd's model of a task's life: the states a task moves
// through, the events that move it, and Next, the one transition function
// every state change goes through. Move applies a transition to a task file
// in memory (its metadata.taskd.state and its status); the caller writes the
// file durably and only then performs the effects Next returned, so an
// agent can only start once its claim is on disk.
//
// The package does no I/O and reads no clock: a state and an event give the
// next state and its effects, or ErrIllegal.
package task
