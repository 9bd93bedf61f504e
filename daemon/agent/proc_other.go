//go:build unix && !linux

package agent

import "syscall"

// dieWithParent does nothing where the system has no parent-death signal;
// recovery kills what it can verify instead (see killLeftover).
func dieWithParent(attr *syscall.SysProcAttr) {}
