package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/taskd/taskd/internal/proc"
)

// procStart returns when process pid started (clock ticks after boot,
// /proc/<pid>/stat's starttime) and the boot it started in, if it exists.
func procStart(pid int) (start uint64, boot string, ok bool) {
	data, err := proc.ReadKernelFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", false
	}
	// pid (comm) state ppid …: starttime is the 20th field after comm,
	// which may hold anything but ends at the last parenthesis.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, "", false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 20 {
		return 0, "", false
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	return start, bootID(), err == nil
}

// bootID identifies this boot of the system.
var bootID = sync.OnceValue(func() string {
	data, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(data))
})
