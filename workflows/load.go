package workflows

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/navigator"
)

// A Definition is one workflow definition as loaded.
type Definition struct {
	ID       string // the file name without ".json" (or the directory name for <id>/workflow.json)
	Workflow *navigator.Workflow
	Data     []byte // the file's contents
	File     string // the file; "builtin/<id>.json" for built-ins
	// SourceRoot is the directory the workflow's "./" paths resolve
	// against: the directory of File, "" for built-ins.
	SourceRoot string
	Builtin    bool
	Problems   []navigator.Problem // from validation; File is set
}

// OK reports whether the definition can be navigated in Strict mode: it
// parsed and has no errors, traps included (warnings are fine). The daemon
// walks only such definitions.
func (d *Definition) OK() bool {
	return d.Usable(navigator.Strict)
}

// Usable reports whether the definition parsed and none of its problems
// blocks it in mode m. In Compatible mode, the mode of `taskd navigate`,
// a workflow with traps is usable, as it is for flow.
func (d *Definition) Usable(m navigator.Mode) bool {
	return d.Workflow != nil && navigator.Usable(d.Problems, m)
}

// A Set is a collection of workflow definitions by id. It implements
// navigator.Catalog. A Set is not modified after Load returns and is safe
// for concurrent use.
type Set struct {
	defs   map[string]*Definition
	unread []navigator.Problem // files and directories Load could not read or use
}

// Lookup returns the navigable workflow registered under id and its source
// root. It implements navigator.Catalog; a definition with errors is not
// returned (use Get to see why).
func (s *Set) Lookup(id string) (*navigator.Workflow, string, bool) {
	d := s.defs[id]
	if d == nil || !d.OK() {
		return nil, "", false
	}
	return d.Workflow, d.SourceRoot, true
}

// Get returns the definition registered under id, navigable or not.
func (s *Set) Get(id string) (*Definition, bool) {
	d, ok := s.defs[id]
	return d, ok
}

// IDs returns the ids of all definitions in byte order.
func (s *Set) IDs() []string {
	return slices.Sorted(maps.Keys(s.defs))
}

// Unread returns the problems of the files and directories Load could not
// read (a FIFO, a directory or a link where a workflow file belongs, a
// directory it may not open) or did not use (a second definition of an
// id): they define nothing, so no definition's Problems has them.
func (s *Set) Unread() []navigator.Problem { return s.unread }

// UnreadOf returns the problem of a file that would define id
// (<id>.json, <id>/workflow.json) but could not be read, if there is one.
func (s *Set) UnreadOf(id string) (navigator.Problem, bool) {
	for _, p := range s.unread {
		if p.File != "" && idOf(p.File) == id {
			return p, true
		}
	}
	return navigator.Problem{}, false
}

// Problems returns the problems of every definition, by id.
func (s *Set) Problems() []navigator.Problem {
	var out []navigator.Problem
	for _, id := range s.IDs() {
		out = append(out, s.defs[id].Problems...)
	}
	return out
}

// Dirs returns the user directories workflows load from, lowest priority
// first: $XDG_CONFIG_HOME/taskd/workflows (~/.config when unset), then
// <listDir>/.taskd/workflows when listDir is not empty.
func Dirs(listDir string) []string {
	var dirs []string
	config := os.Getenv("XDG_CONFIG_HOME")
	if config == "" {
		if home, err := os.UserHomeDir(); err == nil {
			config = filepath.Join(home, ".config")
		}
	}
	if config != "" {
		dirs = append(dirs, filepath.Join(config, "taskd", "workflows"))
	}
	if listDir != "" {
		dirs = append(dirs, filepath.Join(listDir, ".taskd", "workflows"))
	}
	return dirs
}

// Load returns the built-in workflows overridden by the workflows in dirs,
// in order: a definition in a later directory replaces one with the same
// id from the built-ins or an earlier directory. A directory that does not
// exist is skipped. The problems of every definition, and files or
// directories that could not be read, are returned too; they never stop
// the loading of the rest.
func Load(dirs ...string) (*Set, []navigator.Problem) {
	s := &Set{defs: map[string]*Definition{}}
	for _, d := range builtins() {
		s.defs[d.ID] = d
	}
	for _, dir := range dirs {
		defs, dirProblems := loadDir(dir)
		s.unread = append(s.unread, dirProblems...)
		for _, d := range defs {
			s.defs[d.ID] = d
		}
	}
	return s, append(slices.Clip(s.unread), s.Problems()...)
}

// Find returns the definition of id that Load(dirs...) would hold, reading
// and parsing only the files that can define it: <id>.json, then
// <id>/workflow.json, in each directory from the last to the first, then
// the built-in. It returns nil when no file defines id, and an error when
// one that may cannot be read. It is for callers that need one workflow,
// such as `taskd navigate`; it validates only that one.
func Find(id string, dirs ...string) (*Definition, error) {
	if id == "" || strings.HasPrefix(id, ".") || strings.ContainsAny(id, `/\`) {
		return nil, nil
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		for _, file := range []string{filepath.Join(dirs[i], id+".json"), filepath.Join(dirs[i], id, "workflow.json")} {
			d, err := LoadFile(file)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			return d, nil
		}
	}
	return builtin(id), nil
}

// loadDir loads the definitions of one directory: <id>.json files and
// <id>/workflow.json. Names starting with "." are ignored.
//
// In a list's own directory (<list>/.taskd/workflows) no link is followed,
// neither the directory nor a file in it (package fsroot): a link there is
// reported as a problem and loads nothing.
func loadDir(dir string) ([]*Definition, []navigator.Problem) {
	readDir, load := os.ReadDir, LoadFile
	if list, ok := areaOf(dir); ok {
		readDir = func(dir string) ([]fs.DirEntry, error) { return fsroot.ReadDir(list, dir) }
		load = func(file string) (*Definition, error) {
			data, err := fsroot.ReadFile(list, file, maxWorkflow)
			if err != nil {
				return nil, fmt.Errorf("read workflow: %w", err)
			}
			return define(idOf(file), data, file, filepath.Dir(file), false), nil
		}
	}
	entries, err := readDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []navigator.Problem{{File: dir, Reason: fmt.Sprintf("cannot read the workflow directory: %v", err)}}
	}
	var defs []*Definition
	var problems []navigator.Problem
	seen := map[string]string{}
	// <id>.json files first, so that they win over <id>/workflow.json.
	for _, dirs := range []bool{false, true} {
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") || e.IsDir() != dirs {
				continue
			}
			var id, file string
			if dirs {
				id, file = name, filepath.Join(dir, name, "workflow.json")
				if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
					continue
				}
			} else if id = strings.TrimSuffix(name, ".json"); id == name {
				continue
			} else {
				file = filepath.Join(dir, name)
			}
			if other, dup := seen[id]; dup {
				problems = append(problems, navigator.Problem{File: file, Reason: fmt.Sprintf("workflow %q is also defined by %s, which is used", id, other)})
				continue
			}
			seen[id] = file
			d, err := load(file)
			if err != nil {
				problems = append(problems, navigator.Problem{File: file, Reason: err.Error()})
				continue
			}
			defs = append(defs, d)
		}
	}
	return defs, problems
}

// LoadFile reads, parses and validates one workflow file. Its id is the
// file name without ".json", or the directory's name for workflow.json.
// Only a file that cannot be read is an error; a file that is not a JSON
// object yields a definition without a Workflow and a problem saying so.
func LoadFile(path string) (*Definition, error) {
	data, err := fsroot.ReadRegular(path)
	if err != nil {
		return nil, fmt.Errorf("read workflow: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return define(idOf(path), data, path, filepath.Dir(abs), false), nil
}

// idOf is the id of the workflow file at path.
func idOf(path string) string {
	if filepath.Base(path) == "workflow.json" {
		return filepath.Base(filepath.Dir(path))
	}
	return strings.TrimSuffix(filepath.Base(path), ".json")
}

// maxWorkflow bounds the size of a workflow file read from a list.
const maxWorkflow = 4 << 20

// areaOf returns the list directory of dir when dir is a list's own
// workflow directory, <list>/.taskd/workflows (see Dirs).
func areaOf(dir string) (list string, ok bool) {
	area := filepath.Dir(dir)
	if filepath.Base(dir) != "workflows" || filepath.Base(area) != ".taskd" {
		return "", false
	}
	return filepath.Dir(area), true
}

// Define parses and validates the definition of workflow id read from
// file (its contents data), whose "./" paths resolve against sourceRoot
// ("" for none). It is for callers that read workflow files themselves;
// a file that is not a workflow yields a definition with a problem, as
// LoadFile's.
func Define(id string, data []byte, file, sourceRoot string) *Definition {
	return define(id, data, file, sourceRoot, false)
}

// define parses and validates one definition.
func define(id string, data []byte, file, root string, builtin bool) *Definition {
	d := &Definition{ID: id, Data: data, File: file, SourceRoot: root, Builtin: builtin}
	wf, err := navigator.Parse(data)
	if err != nil {
		d.Problems = []navigator.Problem{{File: file, Reason: err.Error()}}
		return d
	}
	d.Workflow = wf
	d.Problems = navigator.Validate(wf)
	if wf.ID != "" && wf.ID != id {
		d.Problems = append(d.Problems, navigator.Problem{Warning: true,
			Reason: fmt.Sprintf("the \"id\" field says %q, but the workflow is known by its file name as %q", wf.ID, id)})
	}
	for i := range d.Problems {
		d.Problems[i].File = file
	}
	return d
}
