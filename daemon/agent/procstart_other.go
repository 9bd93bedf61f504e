//go:build unix && !linux

package agent

// procStart reports nothing: the start time of a process is not read here
// (see KillLeftover).
func procStart(int) (uint64, string, bool) { return 0, "", false }
