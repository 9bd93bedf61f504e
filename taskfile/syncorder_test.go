package taskfile_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/taskd/taskd/taskfile"
)

// returnedMark is what the helper prints once Update or Create returned.
const returnedMark = "RETURNED"

// A syscall is one completed system call from strace's output.
type syscallRec struct {
	i    int    // position in completion order
	name string // openat, fsync, renameat, …
	args string
	ret  string
}

var (
	straceLine    = regexp.MustCompile(`^\d+\s+(\w+)\((.*)\)\s+=\s+(-?\w+)`)
	straceStart   = regexp.MustCompile(`^(\d+)\s+(\w+)\((.*) <unfinished \.\.\.>$`)
	straceResumed = regexp.MustCompile(`^(\d+)\s+<\.\.\. (\w+) resumed>(.*)\)\s+=\s+(-?\w+)`)
)

// traceSyscalls runs the helper under strace and returns its file system
// calls in the order they completed.
func traceSyscalls(t *testing.T, helperArgs string) []syscallRec {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("TASKD_REQUIRE_TOOLS") == "1" {
			t.Fatalf("strace is not installed, and TASKD_REQUIRE_TOOLS=1")
		}
		t.Skip("skipping: strace is not installed")
	}
	out := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(strace, "-f", "-qq", "-s", "64", "-o", out,
		"-e", "trace=openat,open,creat,write,fsync,fdatasync,rename,renameat,renameat2,link,linkat,unlink,unlinkat,close",
		os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TASKD_TASKFILE_HELPER="+helperArgs)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("strace %s: %v\n%s", helperArgs, err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []syscallRec
	pending := map[string]string{} // pid → args of an unfinished call
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := straceStart.FindStringSubmatch(line); m != nil {
			pending[m[1]+" "+m[2]] = m[3]
			continue
		}
		if m := straceResumed.FindStringSubmatch(line); m != nil {
			args := pending[m[1]+" "+m[2]] + m[3]
			calls = append(calls, syscallRec{i: len(calls), name: m[2], args: args, ret: m[4]})
			continue
		}
		if m := straceLine.FindStringSubmatch(line); m != nil {
			calls = append(calls, syscallRec{i: len(calls), name: m[1], args: m[2], ret: m[3]})
		}
	}
	if len(calls) == 0 {
		t.Fatalf("strace recorded no calls (is ptrace allowed here?)")
	}
	return calls
}

// fileOps follows file descriptors through a trace: which path each
// descriptor named when a call used it.
type fileOps struct {
	calls []syscallRec
	path  map[int]string // position of a call on a descriptor → its path
}

func newFileOps(calls []syscallRec) *fileOps {
	ops := &fileOps{calls: calls, path: map[int]string{}}
	open := map[string]string{} // fd → path
	for _, c := range calls {
		switch c.name {
		case "openat", "open", "creat":
			if fd, err := strconv.Atoi(c.ret); err == nil {
				open[strconv.Itoa(fd)] = firstQuoted(c.args)
			}
		case "close":
			delete(open, firstArg(c.args))
		case "write", "fsync", "fdatasync":
			ops.path[c.i] = open[firstArg(c.args)]
		}
	}
	return ops
}

// find returns the positions of calls named name whose path (for calls on
// a descriptor) or arguments satisfy match.
func (o *fileOps) find(name string, match func(c syscallRec, path string) bool) []int {
	var out []int
	for _, c := range o.calls {
		if c.name == name && match(c, o.path[c.i]) {
			out = append(out, c.i)
		}
	}
	return out
}

func firstArg(args string) string { a, _, _ := strings.Cut(args, ","); return strings.TrimSpace(a) }

func firstQuoted(args string) string {
	_, rest, ok := strings.Cut(args, `"`)
	if !ok {
		return ""
	}
	p, _, _ := strings.Cut(rest, `"`)
	return p
}

func quoted(args string) []string {
	var out []string
	for {
		_, rest, ok := strings.Cut(args, `"`)
		if !ok {
			return out
		}
		p, after, _ := strings.Cut(rest, `"`)
		out = append(out, p)
		args = after
	}
}

// TestWriteProtocol_SyscallOrder checks the write protocol on the system
// calls a real Update and Create make, as strace records them: the new
// contents go to a temporary file in the same directory, which is fsynced
// before it is renamed (or, for Create, linked) over the task file, and
// the directory is fsynced after the rename and before the call returns
// (unless NoDirSync). The task file itself is never opened for writing.
// That order is what the power-loss guarantee rests on: after a power loss
// a task file is the old version or the new one, never torn or empty, and
// a write that returned survives.
func TestWriteProtocol_SyscallOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		helper  string // helper command
		place   string // renameat or linkat
		dirSync bool   // the directory must be fsynced before returning
	}{
		{"Update", "update", "rename", true},
		{"Update with NoDirSync", "update-nodirsync", "rename", false},
		{"Create", "create-id", "link", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			d, err := taskfile.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			id := "7"
			if tt.helper != "create-id" {
				if _, err := d.Create(t.Context(), &taskfile.Task{ID: id, Subject: "s"}); err != nil {
					t.Fatal(err)
				}
			}
			dir = d.Path()
			target := d.File(id)
			ops := newFileOps(traceSyscalls(t, tt.helper+" "+dir+" "+id))

			// The temporary file: created in the directory, named .7.json….
			isTemp := func(p string) bool {
				return filepath.Dir(p) == dir && strings.HasPrefix(filepath.Base(p), "."+id+".json")
			}
			places := ops.find(tt.place+"at", func(c syscallRec, _ string) bool {
				q := quoted(c.args)
				return c.ret == "0" && len(q) == 2 && isTemp(q[0]) && q[1] == target
			})
			for _, name := range []string{tt.place, tt.place + "at2"} { // renameat2: the exchange of an update
				places = append(places, ops.find(name, func(c syscallRec, _ string) bool {
					q := quoted(c.args)
					return c.ret == "0" && len(q) == 2 && isTemp(q[0]) && q[1] == target
				})...)
			}
			if got, want := len(places), 1; got != want {
				t.Fatalf("%d successful %s calls of a temporary file onto %s, want %d", got, tt.place, target, want)
			}
			place := places[0]
			writes := ops.find("write", func(_ syscallRec, p string) bool { return isTemp(p) })
			syncs := ops.find("fsync", func(_ syscallRec, p string) bool { return isTemp(p) })
			if len(writes) == 0 {
				t.Fatalf("no write to the temporary file")
			}
			lastWrite := writes[len(writes)-1]
			syncedBetween := false
			for _, s := range syncs {
				syncedBetween = syncedBetween || s > lastWrite && s < place
			}
			if !syncedBetween || lastWrite > place {
				t.Errorf("temporary file: last write at %d, fsyncs at %v, %s at %d; want write, then fsync, then %s", lastWrite, syncs, tt.place, place, tt.place)
			}
			returned := ops.find("write", func(c syscallRec, _ string) bool {
				return firstArg(c.args) == "1" && strings.Contains(c.args, returnedMark)
			})
			if len(returned) != 1 {
				t.Fatalf("the helper's %q line is not in the trace", returnedMark)
			}
			dirSyncs := ops.find("fsync", func(c syscallRec, p string) bool { return p == dir && c.ret == "0" })
			dirSynced := false
			for _, s := range dirSyncs {
				dirSynced = dirSynced || s > place && s < returned[0]
			}
			if got, want := dirSynced, tt.dirSync; got != want && want {
				t.Errorf("directory fsyncs at %v, %s at %d, returned at %d: want a directory fsync in between", dirSyncs, tt.place, place, returned[0])
			}
			written := ops.find("openat", func(c syscallRec, _ string) bool {
				return firstQuoted(c.args) == target && (strings.Contains(c.args, "O_WRONLY") || strings.Contains(c.args, "O_RDWR") || strings.Contains(c.args, "O_TRUNC"))
			})
			if len(written) > 0 {
				t.Errorf("the task file was opened for writing (calls %v): a crash could tear it", written)
			}
			t.Logf("%s: write %d, fsync %v, %s %d, directory fsync %v, returned %d", tt.name, lastWrite, syncs, tt.place, place, dirSyncs, returned[0])
			if _, err := d.Read(id); err != nil {
				t.Errorf("after the traced write: %v", err)
			}
		})
	}
}

// TestUpdate_ReplacedFileClosedOutsideLocks: Update reads the file it
// replaces through a descriptor opened under the list's lock, before the
// rename, and closes it only once the list's lock is released (the close
// of .lock), so that the kernel frees the replaced inode outside the lock
// every writer of the list waits for, not in the rename.
func TestUpdate_ReplacedFileClosedOutsideLocks(t *testing.T) {
	t.Parallel()
	d, err := taskfile.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const id = "7"
	if _, err := d.Create(t.Context(), &taskfile.Task{ID: id, Subject: "s"}); err != nil {
		t.Fatal(err)
	}
	dir, target, lock := d.Path(), d.File(id), filepath.Join(d.Path(), ".lock")
	calls := traceSyscalls(t, "update "+dir+" "+id)
	var rename, lockOpen, lockClose, oldOpen, oldClose = -1, -1, -1, -1, -1
	var lockFD, oldFD string
	for _, c := range calls {
		switch {
		case c.name == "openat" && firstQuoted(c.args) == lock && c.ret != "-1":
			lockOpen, lockFD, lockClose = c.i, c.ret, -1
		case c.name == "openat" && firstQuoted(c.args) == target && c.ret != "-1" && rename < 0:
			oldOpen, oldFD, oldClose = c.i, c.ret, -1
		case (c.name == "rename" || c.name == "renameat" || c.name == "renameat2") && c.ret == "0" && slices.Contains(quoted(c.args), target):
			rename = c.i
		case c.name == "close" && firstArg(c.args) == lockFD && lockClose < 0 && lockOpen >= 0:
			lockClose = c.i
		case c.name == "close" && firstArg(c.args) == oldFD && oldClose < 0 && oldOpen >= 0:
			oldClose = c.i
		}
	}
	if rename < 0 || lockOpen < 0 || lockClose < 0 || oldOpen < 0 || oldClose < 0 {
		t.Fatalf("trace lacks a call: rename %d, .lock opened %d closed %d, task file opened %d closed %d", rename, lockOpen, lockClose, oldOpen, oldClose)
	}
	if !(lockOpen < oldOpen && oldOpen < rename && rename < lockClose && lockClose < oldClose) {
		t.Errorf(".lock opened %d, task file opened %d, renamed over %d, .lock closed %d, task file closed %d: want the task file read under the lock, before the rename, and closed after the lock's release",
			lockOpen, oldOpen, rename, lockClose, oldClose)
	}
}
