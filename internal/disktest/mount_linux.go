package disktest

import (
	"fmt"
	"syscall"
)

// mountTmpfs mounts a tmpfs of size bytes at dir.
func mountTmpfs(dir string, size int) (unmount func() error, err error) {
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		return nil, err
	}
	return func() error { return syscall.Unmount(dir, syscall.MNT_DETACH) }, nil
}
