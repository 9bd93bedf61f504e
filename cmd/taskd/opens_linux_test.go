package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// dirOpens returns a count of the times directory dir is opened from now
// on, by any process. A daemon's rescan opens every list directory to
// read it; an idle daemon opens one for nothing else. So the count is the
// daemon's rescans, as the kernel saw them.
func dirOpens(t *testing.T, dir string) func() int {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_OPEN|unix.IN_ONLYDIR); err != nil {
		t.Fatalf("watch %s: %v", dir, err)
	}
	opens := 0
	buf := make([]byte, 64*1024)
	return func() int {
		for {
			n, err := unix.Read(fd, buf)
			if errors.Is(err, unix.EAGAIN) {
				return opens
			}
			if err != nil {
				t.Fatalf("read inotify events: %v", err)
			}
			for b := bytes.NewReader(buf[:n]); b.Len() > 0; {
				var ev unix.InotifyEvent
				if err := binary.Read(b, binary.NativeEndian, &ev); err != nil {
					t.Fatalf("an inotify event: %v", err)
				}
				b.Seek(int64(ev.Len), 1) // the name of a file in dir
				if ev.Len == 0 && ev.Mask&unix.IN_OPEN != 0 {
					opens++ // dir itself
				}
			}
		}
	}
}
