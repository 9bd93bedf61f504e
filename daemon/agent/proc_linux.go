package agent

import "syscall"

// dieWithParent makes the kernel send SIGKILL to the process when the
// daemon exits, however it exits. (The signal follows the thread that
// started the process; the daemon never ends the threads it starts agents
// from.)
func dieWithParent(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}
