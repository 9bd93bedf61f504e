// Package prompt parses and validates what users write inside task
// prompts and command files: the slash lines of a prompt (/read, /push,
// /run, /subtask, /delegate, /handoff, /converge and /name for a command
// file), inline {key:value && …} blocks, command files with
// their frontmatter, the arguments of `taskd delegate|handoff|converge`,
// $ARGUMENTS and $RESULT[name], and the workflow an auto planner writes.
//
// The contract:
//
//   - Pure. Nothing here reads files, looks at the clock, logs or runs a
//     process; every function is a function of its arguments and is safe
//     for concurrent use. The daemon executes what this package parses.
//
//   - Strict. Input is accepted only when it has one meaning. Unknown
//     commands, keys, options and flags, repeated keys, malformed blocks and
//     values of the wrong form are errors, never silently dropped or
//     guessed at. Every error is an *Error that names the line (where the
//     input has lines), quotes what was written, and says how to write it.
//
//   - Canonical. Settings compile to plain Go values; Overrides convert to
//     and from the metadata.taskd fields the daemon stores (Fields,
//     OverridesFromFields), which are canonical: the inline syntax is only
//     a way to write them. Script, Overrides, the subagent commands and
//     CommandFile render back to text (String) that parses to an equal
//     value.
//
//   - Not recursive. Only the text given is parsed: the prompt of a /push,
//     the content of a file named by /read and the body of a command file
//     are kept as written, to be parsed when they are used.
//
// The syntax is documented for users in docs/prompt-commands.md.
package prompt
