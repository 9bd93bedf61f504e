// Package navigator walks workflow graphs exactly as the flow plugin's
// Navigator (leclabs/agent-toolkit v2.1.0) does, so that one task file can
// be driven by /flow:run inside Claude Code and by taskd interchangeably.
//
// It is pure: no file I/O, no clock, no logging. Given a workflow, the task's
// current state and the Navigate inputs, it returns the response and the
// write-through to apply to the task file; callers do the reading and
// writing.
package navigator
