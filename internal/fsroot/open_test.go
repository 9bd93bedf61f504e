package fsroot_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/taskd/taskd/internal/fsroot"
)

// setup returns a base (a list) and a directory beside it (outside).
func setup(t *testing.T) (base, outside string) {
	t.Helper()
	d := t.TempDir()
	base, outside = filepath.Join(d, "list"), filepath.Join(d, "outside")
	for _, p := range []string{base, outside} {
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return base, outside
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if p != dir {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// Every operation refuses a link at any step, and nothing is made or
// written beside the base.
func TestLinksRefused(t *testing.T) {
	ops := []struct {
		name string
		do   func(base string) error
	}{
		{"MkdirAll", func(b string) error { return fsroot.MkdirAll(b, ".taskd/runs/a/1") }},
		{"OpenFD", func(b string) error {
			fd, err := fsroot.OpenFD(b, ".taskd/runs/a/1/prompt.md", os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
			if err == nil {
				syscall.Close(fd)
			}
			return err
		}},
		{"WriteFile", func(b string) error { return fsroot.WriteFile(b, ".taskd/runs/a/1/result.json", []byte("{}")) }},
		{"ReadFile", func(b string) error { _, err := fsroot.ReadFile(b, ".taskd/runs/a/1/secret", 100); return err }},
		{"ReadDir", func(b string) error { _, err := fsroot.ReadDir(b, ".taskd/runs/a/1"); return err }},
		{"RemoveAll", func(b string) error { _, err := fsroot.RemoveAll(b, ".taskd/runs/a/1/secret"); return err }},
	}
	links := []string{".taskd", ".taskd/runs", ".taskd/runs/a", ".taskd/runs/a/1"}
	for _, op := range ops {
		for _, link := range links {
			t.Run(op.name+"/"+link, func(t *testing.T) {
				base, outside := setup(t)
				os.MkdirAll(filepath.Join(outside, "1"), 0o700)
				os.WriteFile(filepath.Join(outside, "1", "secret"), []byte("s"), 0o600)
				os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600)
				if err := os.MkdirAll(filepath.Join(base, filepath.Dir(link)), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, filepath.Join(base, link)); err != nil {
					t.Fatal(err)
				}
				before := entries(t, outside)
				err := op.do(base)
				if !errors.Is(err, fsroot.ErrLink) {
					t.Errorf("%s with %s a link: %v, want ErrLink", op.name, link, err)
				}
				if after := entries(t, outside); len(after) != len(before) {
					t.Errorf("outside changed: %v, was %v", after, before)
				}
			})
		}
	}
}

func TestFinalLinkNotFollowed(t *testing.T) {
	base, outside := setup(t)
	target := filepath.Join(outside, "target")
	os.WriteFile(target, []byte("keep"), 0o600)
	os.MkdirAll(filepath.Join(base, ".taskd"), 0o700)
	link := filepath.Join(base, ".taskd", "events.jsonl")
	os.Symlink(target, link)
	if _, err := fsroot.OpenFD(base, link, os.O_WRONLY|os.O_APPEND|os.O_CREATE); !errors.Is(err, fsroot.ErrLink) {
		t.Errorf("OpenFD through a final link: %v, want ErrLink", err)
	}
	// WriteFile replaces the link itself.
	if err := fsroot.WriteFile(base, link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(target); string(got) != "keep" {
		t.Errorf("target = %q, want it unchanged", got)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink != 0 {
		t.Errorf("%s is still a link", link)
	}
}

func TestHardLinkNotWritten(t *testing.T) {
	base, outside := setup(t)
	target := filepath.Join(outside, "target")
	os.WriteFile(target, []byte("keep"), 0o600)
	os.MkdirAll(filepath.Join(base, ".taskd"), 0o700)
	if err := os.Link(target, filepath.Join(base, ".taskd", "events.jsonl")); err != nil {
		t.Skip("no hard links here:", err)
	}
	for _, flag := range []int{os.O_WRONLY | os.O_APPEND | os.O_CREATE, os.O_WRONLY | os.O_TRUNC | os.O_CREATE, os.O_RDWR} {
		_, err := fsroot.OpenFD(base, ".taskd/events.jsonl", flag)
		if !errors.Is(err, fsroot.ErrHardLink) {
			t.Errorf("OpenFD(%#x) of a hard link: %v, want ErrHardLink", flag, err)
		}
	}
	if got, _ := os.ReadFile(target); string(got) != "keep" {
		t.Errorf("target = %q, want it unchanged", got)
	}
}

// TestExclusiveCreate: OpenFD with O_CREAT|O_EXCL makes a new private
// file, through the directory handle too; whatever is at the name already
// (a link, a FIFO, a hard link, a file) fails it with fs.ErrExist, without
// being followed, waited on or changed.
func TestExclusiveCreate(t *testing.T) {
	base, outside := setup(t)
	target := filepath.Join(outside, "target")
	os.WriteFile(target, []byte("keep"), 0o600)
	dir := filepath.Join(base, "run")
	os.Mkdir(dir, 0o700)
	plants := map[string]func(p string) error{
		"link":      func(p string) error { return os.Symlink(target, p) },
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"hard link": func(p string) error { return os.Link(target, p) },
		"file":      func(p string) error { return os.WriteFile(p, []byte("earlier"), 0o600) },
	}
	d, err := fsroot.OpenDir(base, "run")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const flag = os.O_WRONLY | os.O_CREATE | os.O_EXCL | os.O_APPEND
	for name, plant := range plants {
		if err := plant(filepath.Join(dir, name)); err != nil {
			t.Logf("cannot plant a %s here: %v", name, err)
			continue
		}
		if fd, err := fsroot.OpenFD(base, "run/"+name, flag); !errors.Is(err, fs.ErrExist) {
			syscall.Close(fd)
			t.Errorf("OpenFD(O_EXCL) of a %s: %v, want fs.ErrExist", name, err)
		}
		if fd, err := d.OpenFD(name, flag); !errors.Is(err, fs.ErrExist) {
			syscall.Close(fd)
			t.Errorf("Dir.OpenFD(O_EXCL) of a %s: %v, want fs.ErrExist", name, err)
		}
	}
	if got, _ := os.ReadFile(target); string(got) != "keep" {
		t.Errorf("target = %q, want it unchanged", got)
	}
	fd, err := d.OpenFD("new.log", flag)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Write(fd, []byte("x"))
	syscall.Close(fd)
	if fi, err := os.Lstat(filepath.Join(dir, "new.log")); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 || fi.Size() != 1 {
		t.Errorf("the new file: %v, %v; want a regular file, 0600, of one byte", fi, err)
	}
}

// What is made is private whatever the umask.
func TestModes(t *testing.T) {
	for _, mask := range []int{0, 0o022, 0o077, 0o277} {
		old := fsroot.SetUmask(mask)
		base, _ := setup(t)
		if err := fsroot.MkdirAll(base, ".taskd/runs/a/1"); err != nil {
			t.Fatal(err)
		}
		fd, err := fsroot.OpenFD(base, ".taskd/runs/a/1/stdout.log", os.O_WRONLY|os.O_CREATE)
		if err != nil {
			t.Fatal(err)
		}
		syscall.Close(fd)
		if err := fsroot.WriteFile(base, ".taskd/rejected/x.json.txt", []byte("x")); err != nil {
			t.Fatal(err)
		}
		fsroot.SetUmask(old)
		for _, p := range []string{".taskd", ".taskd/runs", ".taskd/runs/a/1", ".taskd/rejected"} {
			if fi, err := os.Stat(filepath.Join(base, p)); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("umask %04o: %s is %v (%v), want 0700", mask, p, fi.Mode().Perm(), err)
			}
		}
		for _, p := range []string{".taskd/runs/a/1/stdout.log", ".taskd/rejected/x.json.txt"} {
			if fi, err := os.Stat(filepath.Join(base, p)); err != nil || (mask&0o600 == 0 && fi.Mode().Perm() != 0o600) || fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("umask %04o: %s is %v (%v), want 0600", mask, p, fi.Mode().Perm(), err)
			}
		}
	}
}

func TestRenameRemove(t *testing.T) {
	base, _ := setup(t)
	if err := fsroot.WriteFile(base, "inbox/tmp/m", []byte("m")); err != nil {
		t.Fatal(err)
	}
	if err := fsroot.MkdirAll(base, "inbox/new"); err != nil {
		t.Fatal(err)
	}
	if err := fsroot.Rename(base, "inbox/tmp/m", "inbox/new/m"); err != nil {
		t.Fatal(err)
	}
	if got, err := fsroot.ReadFile(base, "inbox/new/m", 10); err != nil || string(got) != "m" {
		t.Errorf("ReadFile = %q, %v, want \"m\"", got, err)
	}
	if err := fsroot.Rename(base, "inbox/new/m", "../m"); !errors.Is(err, fsroot.ErrEscape) {
		t.Errorf("Rename out of the base: %v, want ErrEscape", err)
	}
	if err := fsroot.Remove(base, "inbox/new/m"); err != nil {
		t.Fatal(err)
	}
	if err := fsroot.Remove(base, "inbox/new"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(base, "inbox", "new")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("inbox/new still there: %v", err)
	}
}

func TestMkdir(t *testing.T) {
	base, outside := setup(t)
	if err := fsroot.Mkdir(base, ".taskd/runs/a/1"); err != nil {
		t.Fatal(err)
	}
	if err := fsroot.Mkdir(base, ".taskd/runs/a/1"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Mkdir of an existing directory: %v, want ErrExist", err)
	}
	os.Symlink(outside, filepath.Join(base, ".taskd", "runs", "a", "2"))
	if err := fsroot.Mkdir(base, ".taskd/runs/a/2"); !errors.Is(err, fsroot.ErrLink) {
		t.Errorf("Mkdir of a link: %v, want ErrLink", err)
	}
}

// TestDir: a folder opened once writes and opens its files as WriteFile
// and OpenFD do — a link in a file's place is refused and left alone, a
// file with other hard links is not written through, a name that is a
// path is refused — and fails once closed.
func TestDir(t *testing.T) {
	base := t.TempDir()
	if err := fsroot.MkdirAll(base, "runs/1"); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside")
	os.WriteFile(outside, []byte("keep"), 0o600)
	folder := filepath.Join(base, "runs", "1")
	os.Symlink(outside, filepath.Join(folder, "link.json"))
	os.Link(outside, filepath.Join(folder, "hard.log"))

	d, err := fsroot.OpenDir(base, "runs/1")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("cmd.json", []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(folder, "cmd.json")); string(got) != "{}\n" {
		t.Errorf("cmd.json = %q", got)
	}
	fd, err := d.OpenFD("stdout.log", os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Close(fd)
	for name, want := range map[string]error{"link.json": fsroot.ErrLink, "hard.log": fsroot.ErrHardLink, "../x": fs.ErrInvalid, "": fs.ErrInvalid} {
		if fd, err := d.OpenFD(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC); !errors.Is(err, want) {
			syscall.Close(fd)
			t.Errorf("OpenFD(%q) = %v, want %v", name, err, want)
		}
	}
	if got, _ := os.ReadFile(outside); string(got) != "keep" {
		t.Errorf("the file outside became %q", got)
	}
	d.Close()
	if err := d.WriteFile("cmd.json", nil); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("WriteFile after Close = %v, want fs.ErrClosed", err)
	}
}
