// Package daemon is taskd's loop: it watches a root of task lists, reads
// each task file it is told of into what it remembers of it, keeps each
// list's dependency graph, decides which task needs what, and starts a
// job for it (package job), handled by the package of the task's kind
// (plain, flow, subagent). Jobs report back with the task as they wrote
// it; the loop observes that as any other change.
//
// The file system is the only source of truth. File events are hints that
// make the daemon look sooner; every decision is taken from a fresh read of
// the files, so the daemon's own writes cause no work, lost events are
// repaired by rescans, and a daemon killed at any moment picks up where the
// files say it was. docs/architecture.md draws the whole.
package daemon
