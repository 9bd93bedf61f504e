package area_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/internal/fsroot"
)

// newList returns a private list directory named id.
func newList(t *testing.T, id string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCheck: an area is safe when it is missing or a directory of the
// daemon's user without links among its entries; anything else is an
// *fsroot.UnsafeError that names the path and the fix, never followed.
func TestCheck(t *testing.T) {
	outside := t.TempDir()
	for _, tt := range []struct {
		name    string
		make    func(t *testing.T, list string)
		kind    error  // nil: safe
		path    string // the path the error names, relative to the list
		problem string // a part of the error's problem
	}{
		{name: "no area", make: func(*testing.T, string) {}},
		{name: "empty area", make: func(t *testing.T, l string) { mkdir(t, l, ".taskd") }},
		{name: "well-formed area", make: func(t *testing.T, l string) {
			mkdir(t, l, ".taskd/runs/1/1")
			mkdir(t, l, ".taskd/inbox")
			write(t, l, ".taskd/events.jsonl", "{}\n")
		}},
		{name: "the area is a link", make: func(t *testing.T, l string) { link(t, outside, l, ".taskd") },
			kind: fsroot.ErrLink, path: ".taskd", problem: "a symbolic link (to " + outside + ")"},
		{name: "the area is a file", make: func(t *testing.T, l string) { write(t, l, ".taskd", "") },
			kind: fsroot.ErrLink, path: ".taskd", problem: "not a directory"},
		{name: "runs is a link", make: func(t *testing.T, l string) { mkdir(t, l, ".taskd"); link(t, outside, l, ".taskd/runs") },
			kind: fsroot.ErrLink, path: ".taskd/runs", problem: "a symbolic link"},
		{name: "the event log is a dangling link", make: func(t *testing.T, l string) {
			mkdir(t, l, ".taskd")
			link(t, filepath.Join(outside, "missing"), l, ".taskd/events.jsonl")
		}, kind: fsroot.ErrLink, path: ".taskd/events.jsonl", problem: "a symbolic link"},
		{name: "the event log has another name", make: func(t *testing.T, l string) {
			mkdir(t, l, ".taskd")
			write(t, outside, "log", "")
			if err := os.Link(filepath.Join(outside, "log"), filepath.Join(l, ".taskd/events.jsonl")); err != nil {
				t.Fatal(err)
			}
		}, kind: fsroot.ErrLink, path: ".taskd/events.jsonl", problem: "a file with 2 hard links"},
		{name: "a FIFO among the entries is refused, not opened", make: func(t *testing.T, l string) {
			mkdir(t, l, ".taskd")
			if err := syscall.Mkfifo(filepath.Join(l, ".taskd/events.jsonl"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, kind: fsroot.ErrNotRegular, path: ".taskd/events.jsonl", problem: "FIFO"},
		{name: "a link that is no well-known entry", make: func(t *testing.T, l string) {
			mkdir(t, l, ".taskd")
			link(t, outside, l, ".taskd/notes")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			list := newList(t, "L")
			tt.make(t, list)
			err := area.Check(list)
			if tt.kind == nil {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			var ue *fsroot.UnsafeError
			if !errors.As(err, &ue) || !errors.Is(err, tt.kind) || !errors.Is(err, fsroot.ErrUnsafe) {
				t.Fatalf("Check = %v, want an *fsroot.UnsafeError of kind %v", err, tt.kind)
			}
			if got, want := ue.Path, filepath.Join(list, tt.path); got != want {
				t.Errorf("the error names %s, want %s", got, want)
			}
			if !strings.Contains(ue.Problem, tt.problem) {
				t.Errorf("problem %q, want it to contain %q", ue.Problem, tt.problem)
			}
			if ue.Fix == "" || !strings.Contains(ue.Fix, ue.Path) {
				t.Errorf("fix %q does not name the path", ue.Fix)
			}
			if _, err := os.Stat(filepath.Join(outside, "missing")); err == nil {
				t.Error("Check made the target of a link")
			}
		})
	}
}

// TestCheck_Owner: an area another user owns is refused (needs root to
// make one).
func TestCheck_Owner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a directory of another user needs root")
	}
	list := newList(t, "L")
	mkdir(t, list, ".taskd")
	if err := os.Chown(filepath.Join(list, ".taskd"), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := area.Check(list); !errors.Is(err, fsroot.ErrNotOwned) {
		t.Fatalf("Check = %v, want ErrNotOwned", err)
	}
}

// TestMake: Make makes a private area, and makes an existing one of the
// daemon's private; a second call changes nothing.
func TestMake(t *testing.T) {
	for _, tt := range []struct {
		name string
		mode os.FileMode // of an area made before, 0: none
	}{
		{"new", 0},
		{"open", 0o755},
		{"already private", 0o700},
	} {
		t.Run(tt.name, func(t *testing.T) {
			list := newList(t, "L")
			p := filepath.Join(list, area.Name)
			if tt.mode != 0 {
				mkdir(t, list, area.Name)
				if err := os.Chmod(p, tt.mode); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 {
				if err := area.Make(list); err != nil {
					t.Fatal(err)
				}
				fi, err := os.Lstat(p)
				if err != nil {
					t.Fatal(err)
				}
				if !fi.IsDir() || fi.Mode().Perm() != fsroot.DirMode {
					t.Fatalf("the area is %v, want a directory of mode %v", fi.Mode(), fsroot.DirMode)
				}
			}
			if err := area.Check(list); err != nil {
				t.Errorf("Check after Make = %v", err)
			}
		})
	}
}

// TestMake_Link: Make refuses an area that is a link and makes nothing
// where it points.
func TestMake_Link(t *testing.T) {
	list, outside := newList(t, "L"), t.TempDir()
	if err := os.Chmod(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	link(t, outside, list, area.Name)
	if err := area.Make(list); !errors.Is(err, fsroot.ErrLink) {
		t.Fatalf("Make through a link = %v, want ErrLink", err)
	}
	if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the link's target changed: %v %v", fi, err)
	}
}

// TestCheckList: a list is served when its name is a list id, its
// directory private (unless insecure) and its area safe.
func TestCheckList(t *testing.T) {
	for _, tt := range []struct {
		name     string
		id       string
		mode     os.FileMode
		insecure bool
		kind     error // nil: served
		fix      string
	}{
		{name: "a private list", id: "abc-12_Z", mode: 0o700},
		{name: "a name with a space", id: "my list", mode: 0o700, kind: area.ErrListName, fix: "my_list"},
		{name: "a name with a dot", id: "a.b", mode: 0o700, kind: area.ErrListName, fix: "a_b"},
		{name: "writable by others", id: "L", mode: 0o777, kind: fsroot.ErrWritable},
		{name: "writable by others, insecure", id: "L", mode: 0o777, insecure: true},
		{name: "a bad name, insecure", id: "a b", mode: 0o700, insecure: true, kind: area.ErrListName},
	} {
		t.Run(tt.name, func(t *testing.T) {
			list := newList(t, tt.id)
			if err := os.Chmod(list, tt.mode); err != nil {
				t.Fatal(err)
			}
			err := area.CheckList(list, tt.insecure)
			if tt.kind == nil {
				if err != nil {
					t.Fatalf("CheckList = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.kind) {
				t.Fatalf("CheckList = %v, want %v", err, tt.kind)
			}
			var ue *fsroot.UnsafeError
			if errors.As(err, &ue) && tt.fix != "" && !strings.HasSuffix(ue.Fix, filepath.Join(filepath.Dir(list), tt.fix)) {
				t.Errorf("fix %q, want it to end with the name %s", ue.Fix, tt.fix)
			}
		})
	}
}

// TestCheckList_Suggestion: the name suggested for a list whose name is
// no list id is one: bad bytes replaced, cut to 128.
func TestCheckList_Suggestion(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, tt := range []struct{ id, want string }{
		{"été", "__t__"}, // bytes, not runes
		{long, long[:128]},
		{"a:b", "a_b"},
	} {
		list := newList(t, tt.id)
		var ue *fsroot.UnsafeError
		if err := area.CheckList(list, true); !errors.As(err, &ue) {
			t.Fatalf("CheckList(%q) = %v, want an UnsafeError", tt.id, err)
		}
		if got := filepath.Base(strings.Fields(ue.Fix)[2]); got != tt.want {
			t.Errorf("suggested name for %q = %q, want %q", tt.id, got, tt.want)
		}
	}
}

// TestPaths: the layout of the area.
func TestPaths(t *testing.T) {
	const l = "/r/L"
	for _, tt := range []struct{ got, want string }{
		{area.RelRunDir("7", 2), ".taskd/runs/7/2"},
		{area.RunDir(l, "7", 2), "/r/L/.taskd/runs/7/2"},
		{area.RunsDir(l, "7"), "/r/L/.taskd/runs/7"},
		{area.InboxDir(l, "7"), "/r/L/.taskd/inbox/7"},
		{area.RejectNote(l, "x.json"), "/r/L/.taskd/rejected/x.json.txt"},
		{area.RejectedDir(l), "/r/L/.taskd/rejected"},
		{area.EventsFile(l), "/r/L/.taskd/events.jsonl"},
		{area.WorkflowsDir(l), "/r/L/.taskd/workflows"},
		{area.CommandsDir(l), "/r/L/.taskd/commands"},
		{area.WorktreeDir(l, "7"), "/r/L/.taskd/worktrees/7"},
		{area.WorktreesDir(l), "/r/L/.taskd/worktrees"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
}

func mkdir(t *testing.T, base, rel string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(base, rel), 0o700); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, base, rel, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(base, rel), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, to, base, rel string) {
	t.Helper()
	if err := os.Symlink(to, filepath.Join(base, rel)); err != nil {
		t.Fatal(err)
	}
}
