// Package navigator walks workflow graphs exactly as the flow plugin's
// Navigator (leclabs/agent-toolkit v2.1.0) does, so that one task file can
// be driven by /flow:run inside Claude Code and by taskd interchangeably.
//
// It is pure: no file I/O, no clock, no logging, no global state. Callers
// read the task file, pass its state in, and apply the returned
// write-through inside their own locked read-modify-write.
//
// The pieces:
//
//   - Parse decodes a workflow definition (flow's JSON format plus taskd's
//     "command" extension) and keeps node order with JavaScript's object key
//     semantics; Validate lists every problem with it, traps (workflows
//     flow walks but a task can be caught in) marked, and Usable judges
//     the problems in Strict mode (the daemon) or Compatible mode
//     (`taskd navigate`, which walks traps as flow does).
//   - Navigate performs one Navigate call against a Catalog of workflows: it
//     starts a workflow, reports the current step, or advances with a result.
//     It returns the Response (whose JSON is flow's, field for field), the
//     WriteThrough to apply to the task file (as data), or an error: a
//     *NoMatchError is flow's returned error object, anything else is what
//     flow throws, with flow's message.
//
// The behaviour, flow's quirks included (one retry counter per task, the
// substring classifier for guidance, escalations reported as "advance"), is
// checked against recorded flow traces. The deliberate deviations are listed
// in docs/navigator.md: numeric coercion of retryCount and maxRetries,
// autonomy continuing into a fork or join answering as a fork or join, and
// an explicit autonomy=false switching a stored true off. The guidance
// paragraphs are taskd's own wording.
package navigator
