// Package fsroot is taskd's one rule for the paths it writes, and for the
// directories it trusts.
//
// Paths. Everything taskd creates lives inside a directory it was given, a
// base: a list directory (for its .taskd area), the task root, or taskd's
// state directory (for the tasks' git worktrees). A path
// inside a base is named by plain elements (task ids, attempt numbers,
// file names), each checked by CheckName: not empty, no "/", no NUL, not
// "." or "..", at most 255 bytes. Join builds such a path and refuses any
// other element, so an id taken from a task file cannot lead out of its
// list. Every operation here (MkdirAll, OpenFile, WriteFile, ReadFile,
// ReadDir, Rename, Remove) resolves its path from the base without
// following a symbolic link at any step: each directory on the way is
// opened relative to the one before it with O_NOFOLLOW, and so is the final
// name. A link met on the way fails with an error wrapping ErrLink; a path
// that is not inside its base fails with ErrEscape. The base itself is
// trusted as it is (the root may sit behind a link the user made).
//
// Privacy. Directories made here are 0700 and files 0600, whatever the
// process's umask (a umask only ever removes bits, and directories are
// chmodded after mkdir when it may have removed the owner's: umask.go).
// WriteShared and MkdirShared, for a user's project files (what taskd's
// MCP server writes there), make them as other programs do, 0755 and 0644
// less the umask, by the same path rule.
//
// Trust. CheckPrivate says whether a directory may be served: it must
// belong to the process's effective user and not be writable by group or
// others. Its failures are *UnsafeError values that say what is wrong and
// the command that fixes it, and wrap ErrUnsafe.
//
// The operations work on Linux and macOS (openat, mkdirat, renameat); they
// are safe for concurrent use.
package fsroot
