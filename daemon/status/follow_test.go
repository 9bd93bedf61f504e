package status_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/taskd/taskd/daemon/status"
)

// TestFollower: a Follower reads an attempt's log as it grows, moves on to
// the next attempt from its start, says when the task has ended, starts
// at the last lines with SetTail, and neither blocks on a FIFO nor
// follows a link.
func TestFollower(t *testing.T) {
	list := t.TempDir()
	runDir := func(n string) string { return filepath.Join(list, ".taskd", "runs", "7", n) }
	appendTo := func(n, text string) {
		t.Helper()
		os.MkdirAll(runDir(n), 0o700)
		f, err := os.OpenFile(filepath.Join(runDir(n), "out.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(text)
		f.Close()
	}
	name := func(string) string { return "out.log" }
	attempt, ended := 0, false
	latest := func() (int, bool) { return attempt, ended }

	var out strings.Builder
	f := status.NewFollower(list, "7", name, 0)
	if f.Read(&out, latest) || out.Len() != 0 || f.Dir() != "" {
		t.Fatalf("before any attempt: %q, dir %q", out.String(), f.Dir())
	}
	attempt = 1
	appendTo("1", "one\n")
	f.Read(&out, latest)
	appendTo("1", "two\n")
	f.Read(&out, latest)
	appendTo("1", "three\n")
	appendTo("2", "again\n")
	attempt = 2
	f.Read(&out, latest)
	if got, want := out.String(), "one\ntwo\nthree\nagain\n"; got != want {
		t.Errorf("followed %q, want %q", got, want)
	}
	if got, want := f.Dir(), runDir("2"); got != want {
		t.Errorf("Dir() = %q, want %q", got, want)
	}
	appendTo("2", "last\n")
	ended = true
	if !f.Read(&out, latest) || !strings.HasSuffix(out.String(), "again\nlast\n") {
		t.Errorf("at the end: %q", out.String())
	}

	// SetTail: the last bytes, from the line that begins in them.
	var tail strings.Builder
	appendTo("3", strings.Repeat("x", 100)+"\nend one\nend two\n")
	attempt = 3
	g := status.NewFollower(list, "7", name, 3)
	g.SetTail(12)
	g.Read(&tail, latest)
	if got, want := tail.String(), "end two\n"; got != want {
		t.Errorf("tail %q, want %q", got, want)
	}

	// A FIFO and a link are not read.
	os.MkdirAll(runDir("4"), 0o700)
	if err := syscall.Mkfifo(filepath.Join(runDir("4"), "out.log"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(runDir("5"), 0o700)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("secret\n"), 0o600)
	os.Symlink(secret, filepath.Join(runDir("5"), "out.log"))
	var other strings.Builder
	for _, n := range []int{4, 5} {
		attempt = n
		status.NewFollower(list, "7", name, n).Read(&other, latest)
	}
	if other.Len() != 0 {
		t.Errorf("read %q through a FIFO or a link", other.String())
	}
}
