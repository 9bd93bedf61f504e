//go:build !linux

package main

// setBatchScheduling does nothing where there is no SCHED_BATCH.
func setBatchScheduling() error { return nil }
