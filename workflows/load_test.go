package workflows_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/taskd/taskd/workflows"
)

// minimal returns a valid workflow whose one step is named name.
func minimal(name string) string {
	return `{"name": "` + name + `", "nodes": {"start": {"type": "start"}, "step": {"type": "task", "name": "` + name + `"},
	"done": {"type": "end", "result": "success"}}, "edges": [{"from": "start", "to": "step"}, {"from": "step", "to": "done"}]}`
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func stepName(t *testing.T, s *workflows.Set, id string) string {
	t.Helper()
	wf, _, ok := s.Lookup(id)
	if !ok {
		t.Fatalf("no workflow %q", id)
	}
	return wf.Node("step").Name
}

// TestLoad_Order checks that later directories override earlier ones and
// all of them override the built-ins.
func TestLoad_Order(t *testing.T) {
	base := t.TempDir()
	user, list := filepath.Join(base, "user"), filepath.Join(base, "list")
	writeFile(t, filepath.Join(user, "mine.json"), minimal("user"))
	writeFile(t, filepath.Join(user, "shared.json"), minimal("user"))
	writeFile(t, filepath.Join(user, "quick-task.json"), minimal("user"))
	writeFile(t, filepath.Join(list, "shared.json"), minimal("list"))
	writeFile(t, filepath.Join(list, "bundle", "workflow.json"), minimal("list"))

	s, problems := workflows.Load(user, filepath.Join(base, "missing"), list)
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	for id, want := range map[string]string{"mine": "user", "shared": "list", "quick-task": "user", "bundle": "list"} {
		if got := stepName(t, s, id); got != want {
			t.Errorf("%s comes from %q, want %q", id, got, want)
		}
	}
	if _, _, ok := s.Lookup("bug-fix"); !ok {
		t.Error("the built-in bug-fix is gone")
	}
	if d, _ := s.Get("bug-fix"); !d.Builtin || d.SourceRoot != "" || d.File != "builtin/bug-fix.json" {
		t.Errorf("built-in definition = %+v", d)
	}
	if _, root, _ := s.Lookup("bundle"); root != filepath.Join(list, "bundle") {
		t.Errorf("bundle's source root = %q, want its directory", root)
	}
	if _, root, _ := s.Lookup("shared"); root != list {
		t.Errorf("shared's source root = %q, want %q", root, list)
	}
}

// TestLoad_Problems checks that a broken definition is reported, shadows
// the definition it replaces, and is not navigable, while the rest loads.
func TestLoad_Problems(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bug-fix.json"), `{"nodes": {}, "edges": []}`)
	writeFile(t, filepath.Join(dir, "garbage.json"), `{"nodes":`)
	writeFile(t, filepath.Join(dir, "good.json"), minimal("good"))
	writeFile(t, filepath.Join(dir, "good", "workflow.json"), minimal("twice"))
	writeFile(t, filepath.Join(dir, ".hidden.json"), `not even JSON`)
	writeFile(t, filepath.Join(dir, "notes.txt"), `ignored`)
	writeFile(t, filepath.Join(dir, "empty-dir", "README"), `ignored`)

	s, problems := workflows.Load(dir)
	var got []string
	for _, p := range problems {
		got = append(got, strings.TrimPrefix(p.String(), dir+string(filepath.Separator)))
	}
	want := []string{
		filepath.Join("good", "workflow.json") + `: workflow "good" is also defined by ` + filepath.Join(dir, "good.json") + `, which is used`,
		`bug-fix.json: there is no node of type "start"`,
		`garbage.json: parse workflow: line 1, column 10: unexpected end of file, expected a value`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, _, ok := s.Lookup("bug-fix"); ok {
		t.Error("a broken bug-fix is navigable")
	}
	if d, ok := s.Get("bug-fix"); !ok || d.OK() || d.Builtin {
		t.Errorf("Get(bug-fix) = %+v, want the broken user definition", d)
	}
	if got := stepName(t, s, "good"); got != "good" {
		t.Errorf("good comes from %q", got)
	}
	if _, ok := s.Get(".hidden"); ok {
		t.Error("a dot-file was loaded")
	}
}

func TestDirs(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	if got, want := workflows.Dirs("/tasks/list"), []string{"/cfg/taskd/workflows", "/tasks/list/.taskd/workflows"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Dirs = %q, want %q", got, want)
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got, want := workflows.Dirs(""), []string{"/home/u/.config/taskd/workflows"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Dirs = %q, want %q", got, want)
	}
}

// TestFind checks that Find returns, for every id, the definition Load
// would hold.
func TestFind(t *testing.T) {
	base := t.TempDir()
	user, list := filepath.Join(base, "user"), filepath.Join(base, "list")
	writeFile(t, filepath.Join(user, "shared.json"), minimal("user"))
	writeFile(t, filepath.Join(user, "quick-task.json"), minimal("user"))
	writeFile(t, filepath.Join(list, "shared.json"), minimal("list"))
	writeFile(t, filepath.Join(list, "shared", "workflow.json"), minimal("shadowed"))
	writeFile(t, filepath.Join(list, "bundle", "workflow.json"), minimal("bundle"))
	writeFile(t, filepath.Join(list, "bug-fix.json"), `{"nodes": {}, "edges": []}`)
	dirs := []string{user, filepath.Join(base, "missing"), list}
	set, _ := workflows.Load(dirs...)
	for _, id := range []string{"shared", "quick-task", "bundle", "bug-fix", "feature-development", "nope", "", ".hidden", "../user/shared"} {
		got, err := workflows.Find(id, dirs...)
		if err != nil {
			t.Fatalf("Find(%q): %v", id, err)
		}
		want, ok := set.Get(id)
		switch {
		case !ok && got != nil:
			t.Errorf("Find(%q) = %s, Load has none", id, got.File)
		case ok && got == nil:
			t.Errorf("Find(%q) = nil, Load has %s", id, want.File)
		case ok && (got.File != want.File || got.SourceRoot != want.SourceRoot || got.OK() != want.OK() || got.Builtin != want.Builtin):
			t.Errorf("Find(%q) = %s (root %q, ok %v), Load has %s (root %q, ok %v)", id, got.File, got.SourceRoot, got.OK(), want.File, want.SourceRoot, want.OK())
		}
	}
}
