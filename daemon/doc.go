// Package daemon is taskd's engine: it watches a root of task lists, decides
// which task files are taskd's and runnable, runs their agents, walks their
// workflows, spawns and joins their children, and records every state change
// in the task files (through package taskfile) and in each list's event log.
//
// The file system is the only source of truth. File events are hints that
// make the daemon look sooner; every decision is taken from a fresh read of
// the files, so the daemon's own writes cause no work, lost events are
// repaired by rescans, and a daemon killed at any moment picks up where the
// files say it was.
package daemon
