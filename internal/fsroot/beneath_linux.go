package fsroot

import (
	"strings"

	"golang.org/x/sys/unix"
)

// openBeneath opens the directory elems below dir in one system call
// (openat2 with RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS); any failure (a
// missing directory, a link, a kernel without openat2) sends the caller
// to the walk, which makes what is missing and names what is wrong.
func openBeneath(dir int, elems []string) (int, error) {
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for {
		fd, err := unix.Openat2(dir, strings.Join(elems, "/"), &how)
		if err != unix.EINTR && err != unix.EAGAIN {
			return fd, err
		}
	}
}
