package mcpserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/workflows"
)

// This file is what flow's tools navigate and list. Flow keeps an
// in-memory store that is empty when its server starts; taskd's server
// reads from disk at every call instead, so that after a restart nothing
// needs loading again:
//
//  1. the workflows LoadWorkflows loaded from a path ("external"), the
//     last one loaded winning;
//  2. the project's .flow/workflows ("project"), <id>.json or
//     <id>/workflow.json, whose "./" paths resolve against the project, as
//     after flow's CopyWorkflows or LoadWorkflows;
//  3. taskd's own ("catalog"): the task's list's .taskd/workflows, then
//     $XDG_CONFIG_HOME/taskd/workflows, then the built-ins.
//
// The first that defines an id is the one used. Workflows are judged as
// taskd navigate judges them (navigator.Compatible): one with errors
// other than traps is refused, saying why.

// Sources of a workflow, as flow names them.
const (
	sourceCatalog  = "catalog"
	sourceProject  = "project"
	sourceExternal = "external"
)

// A loaded workflow is one LoadWorkflows loaded from a path.
type loaded struct {
	def        *workflows.Definition
	sourceRoot string
}

// An entry is a workflow flow's tools can use, and where it comes from.
type entry struct {
	def        *workflows.Definition
	source     string
	sourceRoot string // "" for none
}

// projectWorkflows is where a project keeps its workflows.
func projectWorkflows(project string) string { return filepath.Join(project, ".flow", "workflows") }

// validWorkflowID reports whether id can name a workflow file.
func validWorkflowID(id string) bool {
	return id != "" && !strings.HasPrefix(id, ".") && !strings.ContainsAny(id, "/\\\x00")
}

// find returns the workflow id for a client in scope sc, working on a task
// of the list at listDir ("" for none), or nil when none defines it.
func (s *Server) find(sc *scope, id, listDir string) (*entry, error) {
	if !validWorkflowID(id) {
		return nil, nil
	}
	s.mu.Lock()
	for i := len(s.external) - 1; i >= 0; i-- {
		if l := s.external[i]; l.def.ID == id {
			s.mu.Unlock()
			return &entry{def: l.def, source: sourceExternal, sourceRoot: l.sourceRoot}, nil
		}
	}
	s.mu.Unlock()
	if p := sc.project(); p != "" {
		dir := projectWorkflows(p)
		for _, file := range []string{filepath.Join(dir, id+".json"), filepath.Join(dir, id, "workflow.json")} {
			if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
				continue
			}
			data, err := sc.readFile(file)
			if err != nil {
				return nil, fmt.Errorf("read workflow %s: %w", id, err)
			}
			return &entry{def: workflows.Define(id, data, file, p), source: sourceProject, sourceRoot: p}, nil
		}
	}
	d, err := workflows.Find(id, workflows.Dirs(listDir)...)
	if d == nil || err != nil {
		return nil, err
	}
	return &entry{def: d, source: sourceCatalog, sourceRoot: d.SourceRoot}, nil
}

// all returns every workflow a client in scope sc can use, by id, in
// flow's order of preference, each usable in Compatible mode.
func (s *Server) all(sc *scope) []*entry {
	var out []*entry
	seen := map[string]int{}
	add := func(e *entry, replace bool) {
		if !e.def.Usable(navigator.Compatible) {
			return
		}
		if i, ok := seen[e.def.ID]; ok {
			if replace {
				out[i] = e
			}
			return
		}
		seen[e.def.ID] = len(out)
		out = append(out, e)
	}
	s.mu.Lock()
	for _, l := range s.external {
		add(&entry{def: l.def, source: sourceExternal, sourceRoot: l.sourceRoot}, true)
	}
	s.mu.Unlock()
	if p := sc.project(); p != "" {
		defs, _ := s.projectDefs(sc)
		for _, d := range defs {
			add(&entry{def: d, source: sourceProject, sourceRoot: p}, false)
		}
	}
	set, _ := workflows.Load(workflows.Dirs("")...)
	for _, id := range set.IDs() {
		d, _ := set.Get(id)
		add(&entry{def: d, source: sourceCatalog, sourceRoot: d.SourceRoot}, false)
	}
	return out
}

// projectDefs reads the project's workflows: <id>.json files and
// <id>/workflow.json, in name order, an <id>.json winning over
// <id>/workflow.json. Files that cannot be read are returned as problems.
func (s *Server) projectDefs(sc *scope) ([]*workflows.Definition, []problem) {
	p := sc.project()
	files, problems := workflowFiles(sc, projectWorkflows(p))
	var defs []*workflows.Definition
	for _, f := range files {
		data, err := sc.readFile(f.path)
		if err != nil {
			problems = append(problems, problem{f.id, err.Error()})
			continue
		}
		defs = append(defs, workflows.Define(f.id, data, f.path, p))
	}
	return defs, problems
}

// A workflowFile is a file that defines a workflow in a directory.
type workflowFile struct{ id, path string }

// A problem is why a workflow was not loaded, as flow's tools report it.
type problem struct{ id, reason string }

// workflowFiles lists the workflow files of dir: <id>.json files and
// <id>/workflow.json, in name order, <id>.json first for one id. Links are
// followed (a project may link its workflows), but only to files the
// client may read. A missing directory has none.
func workflowFiles(sc *scope, dir string) ([]workflowFile, []problem) {
	if err := sc.readable(dir); err != nil {
		return nil, []problem{{"", err.Error()}}
	}
	entries, err := fsroot.ReadDirectory(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []problem{{"", err.Error()}}
	}
	var files []workflowFile
	seen := map[string]bool{}
	for _, dirs := range []bool{false, true} {
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				continue
			}
			full := filepath.Join(dir, name)
			fi, err := os.Stat(full)
			if err != nil || fi.IsDir() != dirs {
				continue
			}
			f := workflowFile{id: name, path: filepath.Join(full, "workflow.json")}
			if !dirs {
				id, ok := strings.CutSuffix(name, ".json")
				if !ok || !fi.Mode().IsRegular() {
					continue
				}
				f = workflowFile{id: id, path: full}
			} else if _, err := os.Stat(f.path); err != nil {
				continue
			}
			if seen[f.id] {
				continue
			}
			seen[f.id] = true
			files = append(files, f)
		}
	}
	slices.SortStableFunc(files, func(a, b workflowFile) int { return strings.Compare(a.id, b.id) })
	return files, nil
}

// navCatalog is the navigator.Catalog of one Navigate call: find, with
// what went wrong remembered so that the error can say why.
type navCatalog struct {
	s       *Server
	sc      *scope
	listDir string
	broken  *workflows.Definition
	err     error
}

func (c *navCatalog) Lookup(id string) (*navigator.Workflow, string, bool) {
	e, err := c.s.find(c.sc, id, c.listDir)
	switch {
	case err != nil:
		c.err = err
		return nil, "", false
	case e == nil:
		return nil, "", false
	case !e.def.Usable(navigator.Compatible):
		c.broken = e.def
		return nil, "", false
	}
	return e.def.Workflow, e.sourceRoot, true
}

// brokenError says why a workflow with errors is not navigated.
func brokenError(d *workflows.Definition) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Workflow '%s' has errors (%s); taskd does not walk it until they are fixed:", d.ID, d.File)
	for _, p := range d.Problems {
		if p.Blocks(navigator.Compatible) {
			b.WriteString("\n  ")
			b.WriteString(p.String())
		}
	}
	return errors.New(b.String())
}
