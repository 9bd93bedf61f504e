package fsroot

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// specials makes, in a new directory, a FIFO, a socket (kept listening)
// and a link to a character device, and returns the directory and their
// names with what each must be called.
func specials(t *testing.T) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Skipf("skipping: mkfifo: %v", err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Skipf("skipping: a socket: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return dir, map[string]string{"fifo": "a FIFO", "sock": "a socket"}
}

// noWait runs f, failing the test if it has not returned within a few
// seconds: what it opens must never be waited on.
func noWait(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s waits", what)
		return nil
	}
}

// TestSpecialFiles: a FIFO or a socket where taskd expects a regular file,
// and anything but a directory where it expects one, is refused at once,
// saying what it is, by every way of opening: inside a base (for reading,
// writing, creating, appending) and anywhere.
func TestSpecialFiles(t *testing.T) {
	t.Parallel()
	dir, names := specials(t)
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, kind := range names {
		path := filepath.Join(dir, name)
		opens := map[string]func() error{
			"OpenFD read":  func() error { fd, err := OpenFD(dir, name, os.O_RDONLY); closeFD(fd); return err },
			"OpenFD write": func() error { fd, err := OpenFD(dir, name, os.O_WRONLY); closeFD(fd); return err },
			"OpenFD append create": func() error {
				fd, err := OpenFD(dir, name, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
				closeFD(fd)
				return err
			},
			"OpenFD truncate": func() error { fd, err := OpenFD(dir, name, os.O_RDWR|os.O_TRUNC); closeFD(fd); return err },
			"ReadFile":        func() error { _, err := ReadFile(dir, name, 1<<20); return err },
			"OpenRegular read": func() error {
				f, err := OpenRegular(path, os.O_RDONLY, 0)
				closeFile(f)
				return err
			},
			"OpenRegular write": func() error {
				f, err := OpenRegular(path, os.O_WRONLY|os.O_CREATE, 0o600)
				closeFile(f)
				return err
			},
			"ReadRegular":   func() error { _, err := ReadRegular(path); return err },
			"ReadDirectory": func() error { _, err := ReadDirectory(path); return err },
			"ReadDir":       func() error { _, err := ReadDir(dir, name); return err },
		}
		for how, open := range opens {
			err := noWait(t, how+" of "+name, open)
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), kind) {
				t.Errorf("%s of %s: %v, want it refused as %s", how, name, err, kind)
			}
		}
	}
	// A regular file is no directory; /dev/null is no regular file.
	if _, err := ReadDirectory(filepath.Join(dir, "file")); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a regular file, not a directory") {
		t.Errorf("ReadDirectory of a file: %v", err)
	}
	if _, err := ReadRegular(os.DevNull); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a character device") {
		t.Errorf("ReadRegular(%s): %v", os.DevNull, err)
	}
	// What is meant works.
	if data, err := ReadRegular(filepath.Join(dir, "file")); err != nil || len(data) != 0 {
		t.Errorf("ReadRegular of a file: %q, %v", data, err)
	}
	if entries, err := ReadDirectory(dir); err != nil || len(entries) != 3 || entries[0].Name() != "fifo" {
		t.Errorf("ReadDirectory: %v, %v", entries, err)
	}
	f, err := OpenRegular(filepath.Join(dir, "new"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("x"); err != nil {
		t.Errorf("a file OpenRegular made cannot be written: %v", err)
	}
	f.Close()
}

func closeFD(fd int) {
	if fd >= 0 {
		syscall.Close(fd)
	}
}

func closeFile(f *os.File) {
	if f != nil {
		f.Close()
	}
}

// TestLockFile: the lock is made when missing and held until the file is
// closed (another taker waits, and gives up when its context ends); a
// link or a FIFO in its place is refused and left as it is.
func TestLockFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".lock")
	lock, err := LockFile(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if l, err := LockFile(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		if l != nil {
			l.Close()
		}
		t.Fatalf("a second LockFile while the first holds it: %v, want the context's deadline", err)
	}
	lock.Close()
	again, err := LockFile(t.Context(), path)
	if err != nil {
		t.Fatalf("LockFile after the first was closed: %v", err)
	}
	again.Close()

	target := filepath.Join(dir, "elsewhere")
	link := filepath.Join(dir, "link.lock")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.lock")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, fifo} {
		if l, err := LockFile(t.Context(), p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			if l != nil {
				l.Close()
			}
			t.Errorf("LockFile(%s) = %v, want it refused", filepath.Base(p), err)
		}
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the link's target was made: %v", err)
	}
}
