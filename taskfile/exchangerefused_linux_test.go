package taskfile_test

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestDir_WriteWhereExchangeIsRefused: where the system refuses to
// exchange two files — a file system that cannot (EINVAL: NFS, FUSE, 9p,
// CIFS), a kernel that predates renameat2 (ENOSYS), or a sandbox whose
// system call filter predates it (EPERM, as older container runtimes'
// default profiles answer a call they do not know) — a write puts its
// new contents in place by a rename, as documented, instead of failing:
// a daemon there would write nothing at all. A real seccomp filter, in
// a process of its own, refuses the exchange with each error.
func TestDir_WriteWhereExchangeIsRefused(t *testing.T) {
	t.Parallel()
	if refuseExchangeFilter(0) == nil {
		t.Skipf("no system call filter for %s", runtime.GOARCH)
	}
	for _, errno := range []unix.Errno{unix.EINVAL, unix.ENOSYS, unix.EOPNOTSUPP, unix.EPERM} {
		t.Run(unix.ErrnoName(errno), func(t *testing.T) {
			t.Parallel()
			d := mustOpen(t)
			writeRaw(t, d, "1.json", `{"id":"1","subject":"a","status":"pending","metadata":{}}`)
			cmd := helperCmd("increment", d.Path(), "1", "count", "3")
			cmd.Env = append(cmd.Env, "TASKD_TASKFILE_REFUSE_EXCHANGE="+strconv.Itoa(int(errno)))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("three updates where the exchange fails with %s: %v\n%s", unix.ErrnoName(errno), err, stderr.String())
			}
			if got, want := readCounter(t, d, "1", "count"), int64(3); got != want {
				t.Errorf("count = %d, want %d", got, want)
			}
		})
	}
}

// refuseExchangeFilter is a seccomp filter that fails every renameat2
// asking for RENAME_EXCHANGE with errno, and allows everything else; nil
// on an architecture it is not written for.
func refuseExchangeFilter(errno unix.Errno) []unix.SockFilter {
	arch := map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	if arch == 0 {
		return nil
	}
	const (
		archAt  = 4        // seccomp_data.arch
		nrAt    = 0        // seccomp_data.nr
		flagsAt = 16 + 8*4 // seccomp_data.args[4], its low half (little endian)
		ld      = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq     = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset    = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret     = unix.BPF_RET | unix.BPF_K
	)
	return []unix.SockFilter{
		{Code: ld, K: archAt},
		{Code: jeq, Jf: 5, K: arch}, // another architecture: allowed
		{Code: ld, K: nrAt},
		{Code: jeq, Jf: 3, K: unix.SYS_RENAMEAT2},
		{Code: ld, K: flagsAt},
		{Code: jset, Jf: 1, K: unix.RENAME_EXCHANGE},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(errno)},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
}

// refuseExchange installs refuseExchangeFilter(errno) on every thread of
// this process (a helper's), and checks that it holds.
func refuseExchange(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return err
	}
	errno := unix.Errno(n)
	prog := refuseExchangeFilter(errno)
	if prog == nil {
		return fmt.Errorf("no filter for %s", runtime.GOARCH)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	// Two names that do not exist: without the filter, ENOENT.
	if err := unix.Renameat2(unix.AT_FDCWD, "/nonexistent-a", unix.AT_FDCWD, "/nonexistent-b", unix.RENAME_EXCHANGE); err != errno {
		return fmt.Errorf("the filter does not hold: exchange = %v, want %v", err, errno)
	}
	return nil
}

func init() {
	if s := os.Getenv("TASKD_TASKFILE_REFUSE_EXCHANGE"); s != "" && os.Getenv("TASKD_TASKFILE_HELPER") != "" {
		if err := refuseExchange(s); err != nil {
			fmt.Fprintln(os.Stderr, "refuse the exchange:", err)
			os.Exit(1)
		}
	}
}
