// Package taskfile reads and writes Claude Code task files: one directory per
// task list, one <id>.json file per task.
//
// It is the only code in taskd that touches task files, and it keeps four
// promises:
//
//   - Lossless. A task is parsed into typed well-known fields plus an ordered
//     document that keeps every other field and every metadata key, in the
//     order the file had them. Writing a task that was not changed reproduces
//     the file byte for byte, and a write that would not change the bytes is
//     skipped. Output is laid out exactly as Claude Code writes it
//     (JSON.stringify with two-space indentation, raw UTF-8, no trailing
//     newline).
//
//   - Atomic and durable. Files are replaced by writing a temporary file in
//     the same directory, fsyncing it, renaming it over the task file and
//     fsyncing the directory. A reader sees the old file or the new one,
//     never part of either, and a completed write survives a crash or power
//     loss. Temporary files start with "." and are swept by Dir.Sweep.
//     An update replaces a file only while it is there: on Linux the new
//     file and the old are exchanged in one step, so a file removed by a
//     writer that takes no lock (a person's rm) is never brought back,
//     and one such a writer renamed into place is not lost: the update
//     starts over from it.
//
//   - Locked. Dir.Update and Dir.Create are read-modify-write cycles under an
//     in-process mutex, a flock(2) on the list's .lock file (never deleted,
//     never the task file), and Claude Code's own lock protocol
//     (proper-lockfile: a <file>.lock directory, refreshed while held, stale
//     after 10 s) on the task file or, for id allocation, on .lock. Neither
//     another taskd process nor Claude Code can lose an update made through
//     this package, and this package loses none of theirs.
//
//   - Strict. A file that is not valid UTF-8 JSON, not an object, larger
//     than 1 MiB, a symbolic link, not a regular file, owned by another
//     user than the process's effective user, has an id that
//     disagrees with its name or a well-known field of the wrong type is
//     reported as a *BadFileError that says what is wrong and how to fix it.
//     Such a file is never modified.
//
// The task directory must be on a local file system: flock and rename are
// not reliable across NFS clients.
package taskfile
