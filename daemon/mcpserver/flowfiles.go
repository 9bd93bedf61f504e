package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/taskd/taskd/internal/jsonorder"
	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/workflows"
)

// This file holds flow's tools that read and write a project's files:
// Diagram, CopyWorkflows, CopyAgents and LoadWorkflows. Everything they
// write lies in the client's roots, everything they read there or in the
// plugin directories (scope).

// diagram is flow's Diagram: the workflow drawn as taskd draws it
// (workflows.DiagramAt) into a Markdown file.
func (s *Server) diagram(_ context.Context, sc *scope, args *jsonorder.Object) (any, error) {
	id, err := stringArg(args, "workflowType")
	if err != nil {
		return nil, err
	}
	current, err := stringArg(args, "currentStep")
	if err != nil {
		return nil, err
	}
	file, err := stringArg(args, "filePath")
	if err != nil {
		return nil, err
	}
	e, err := s.find(sc, id, "")
	switch {
	case err != nil:
		return nil, err
	case e == nil && !args.Has("workflowType"):
		return nil, errors.New("Workflow 'undefined' not found")
	case e == nil:
		return nil, fmt.Errorf("Workflow '%s' not found", id)
	case !e.def.Usable(navigator.Compatible):
		return nil, brokenError(e.def)
	}
	path := file
	if path == "" {
		if sc.project() == "" {
			return nil, errNoRoot
		}
		path = filepath.Join(sc.project(), ".flow", "diagrams", id+".md")
	}
	if err := sc.writeFile(sc.abs(path), []byte(diagramMarkdown(e.def, current))); err != nil {
		return nil, err
	}
	o := jsonorder.NewObject()
	o.Set("savedTo", path)
	o.Set("source", e.source)
	return o, nil
}

// diagramMarkdown is the file Diagram writes: the workflow's name and
// description, its flowchart, and a table of its steps.
func diagramMarkdown(d *workflows.Definition, current string) string {
	wf := d.Workflow
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", firstOf(wf.Name, d.ID))
	if wf.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", wf.Description)
	}
	fmt.Fprintf(&b, "```mermaid\n%s```\n\n", workflows.DiagramAt(wf, current))
	b.WriteString("| step | name | agent | stage | retries |\n|---|---|---|---|---|\n")
	for _, id := range wf.Nodes() {
		n := wf.Node(id)
		if !n.IsWork() {
			continue
		}
		who := n.Agent
		if n.Command != "" {
			who = "$ " + n.Command
		}
		step := id
		if id == current {
			step = "**" + id + "** (current)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d |\n", cell(step), cell(firstOf(n.Name, id)), cell(who), cell(n.Stage), n.MaxRetries)
	}
	return b.String()
}

// cell makes s safe in a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// copyWorkflows is flow's CopyWorkflows: taskd's built-in workflows
// written into the project's .flow/workflows/<id>/workflow.json.
func (s *Server) copyWorkflows(_ context.Context, sc *scope, args *jsonorder.Object) (any, error) {
	ids, err := stringsArg(args, "workflowIds")
	switch {
	case err != nil:
		return nil, err
	case len(ids) == 0:
		return nil, errors.New("workflowIds is required. Use ListCatalog to see available workflows, then pass specific IDs.")
	case sc.project() == "":
		return nil, errNoRoot
	}
	dir := projectWorkflows(sc.project())
	if err := s.writeReadmes(sc, dir); err != nil {
		return nil, err
	}
	builtin := map[string]*workflows.Definition{}
	for _, d := range workflows.Builtin() {
		builtin[d.ID] = d
	}
	copied, failed := []any{}, []any{}
	for _, id := range ids {
		d := builtin[id]
		if d == nil || !validWorkflowID(id) {
			failed = append(failed, idError(id, "not found in catalog"))
			continue
		}
		v, err := jsonorder.Decode(d.Data, jsonorder.Options{JavaScriptOrder: true, JavaScriptNumbers: true})
		if err == nil {
			err = sc.writeFile(filepath.Join(dir, id, "workflow.json"), jsonorder.AppendIndent(nil, v))
		}
		if err != nil {
			failed = append(failed, idError(id, err.Error()))
			continue
		}
		copied = append(copied, id)
	}
	o := jsonorder.NewObject()
	o.Set("schemaVersion", json.Number("2"))
	o.Set("copied", copied)
	if len(failed) > 0 {
		o.Set("errors", failed)
	}
	o.Set("path", dir)
	return o, nil
}

// writeReadmes writes the READMEs of .flow and .flow/workflows that are
// missing (a README a person changed is kept).
func (s *Server) writeReadmes(sc *scope, workflowsDir string) error {
	for path, text := range map[string]string{
		filepath.Join(filepath.Dir(workflowsDir), "README.md"): flowReadme,
		filepath.Join(workflowsDir, "README.md"):               workflowsReadme,
	} {
		if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := sc.writeFile(path, []byte(text)); err != nil {
			return err
		}
	}
	return nil
}

const flowReadme = `# .flow

Workflows for this project, in the format of the flow plugin for Claude
Code, which taskd walks too.

- ` + "`/flow:run`" + ` in a Claude Code session walks a task through its workflow,
  step by step (with taskd mcp as the navigator, or flow's own).
- ` + "`taskd submit --workflow ID 'what to do'`" + ` has the taskd daemon walk it
  while you do something else.

Each workflow is a graph of steps in workflows/<id>/workflow.json.
`

const workflowsReadme = `# Workflows

One directory per workflow, <id>/workflow.json: its steps (nodes: start,
task, gate, fork, join, end) and the edges between them, taken when a step
passed or failed. Change one and the next Navigate call uses it; taskd
workflows validate FILE checks it first.
`

// copyAgents is flow's CopyAgents: taskd's agent templates written into a
// directory of the project, .claude/agents unless told otherwise.
func (s *Server) copyAgents(_ context.Context, sc *scope, args *jsonorder.Object) (any, error) {
	ids, err := stringsArg(args, "agentIds")
	if err != nil {
		return nil, err
	}
	target, err := stringArg(args, "targetDir")
	switch {
	case err != nil:
		return nil, err
	case len(ids) == 0:
		return nil, errors.New("agentIds is required. Use ListCatalog to see available agents, then pass specific IDs.")
	case target == "" && sc.project() == "":
		return nil, errNoRoot
	case target == "":
		target = filepath.Join(sc.project(), ".claude", "agents")
	default:
		target = sc.abs(target)
	}
	if err := sc.mkdirAll(target); err != nil {
		return nil, err
	}
	byID := map[string]workflows.Agent{}
	for _, a := range workflows.Agents() {
		byID[a.ID] = a
	}
	copied, failed := []any{}, []any{}
	for _, id := range ids {
		a, ok := byID[id]
		switch {
		case !ok:
			failed = append(failed, idError(id, "not found in catalog"))
		case !strings.HasPrefix(string(a.Data), "---\n"):
			failed = append(failed, idError(id, "invalid agent template (missing frontmatter)"))
		default:
			if err := sc.writeFile(filepath.Join(target, id+".md"), a.Data); err != nil {
				failed = append(failed, idError(id, err.Error()))
				continue
			}
			copied = append(copied, id)
		}
	}
	o := jsonorder.NewObject()
	o.Set("schemaVersion", json.Number("3"))
	o.Set("copied", copied)
	if len(failed) > 0 {
		o.Set("errors", failed)
	}
	o.Set("path", target)
	return o, nil
}

// loadWorkflows is flow's LoadWorkflows. With a path it loads a plugin's
// workflows (<path>/.flow/workflows, or path itself with sourceRoot) for
// the rest of the session. Without one it lists the project's
// .flow/workflows and checks those named in workflowIds; taskd reads the
// project's workflows at every call, so they need no loading to be used.
func (s *Server) loadWorkflows(_ context.Context, sc *scope, args *jsonorder.Object) (any, error) {
	path, err := stringArg(args, "path")
	if err != nil {
		return nil, err
	}
	sourceRoot, err := stringArg(args, "sourceRoot")
	if err != nil {
		return nil, err
	}
	ids, err := stringsArg(args, "workflowIds")
	if err != nil {
		return nil, err
	}
	if path != "" {
		return s.loadExternal(sc, path, sourceRoot)
	}
	if sc.project() == "" {
		return nil, errNoRoot
	}
	dir := projectWorkflows(sc.project())
	o := jsonorder.NewObject()
	o.Set("schemaVersion", json.Number("2"))
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		o.Set("available", []any{})
		o.Set("loaded", []any{})
		o.Set("source", sourceProject)
		o.Set("path", dir)
		o.Set("hint", "This project has no .flow/workflows directory: CopyWorkflows copies taskd's workflows into it.")
		return o, nil
	}
	files, problems := workflowFiles(sc, dir)
	if len(problems) > 0 {
		return nil, errors.New(problems[0].reason)
	}
	available := []any{}
	byID := map[string]string{}
	for _, f := range files {
		available = append(available, f.id)
		byID[f.id] = f.path
	}
	o.Set("available", available)
	loadedIDs, failed := []any{}, []any{}
	for _, id := range ids {
		file, ok := byID[id]
		if !ok {
			failed = append(failed, idError(id, "not found in .flow/workflows/"))
			continue
		}
		d, err := readDefinition(sc, id, file, sc.project())
		if err != nil {
			failed = append(failed, idError(id, err.Error()))
			continue
		}
		loadedIDs = append(loadedIDs, d.ID)
	}
	o.Set("loaded", loadedIDs)
	if len(failed) > 0 {
		o.Set("errors", failed)
	}
	o.Set("source", sourceProject)
	o.Set("path", dir)
	if len(ids) == 0 {
		o.Set("hint", "Name workflowIds to check and load some of these; Navigate uses the project's workflows without loading.")
	}
	return o, nil
}

// loadExternal loads every usable workflow of a plugin for the rest of
// the session; those it cannot use are logged and skipped, as flow skips
// them.
func (s *Server) loadExternal(sc *scope, path, sourceRoot string) (any, error) {
	p := sc.abs(path)
	dir, root := filepath.Join(p, ".flow", "workflows"), p
	if sourceRoot != "" {
		dir, root = p, sc.abs(sourceRoot)
	}
	files, problems := workflowFiles(sc, dir)
	if len(problems) > 0 {
		return nil, errors.New(problems[0].reason)
	}
	loadedIDs := []any{}
	for _, f := range files {
		d, err := readDefinition(sc, f.id, f.path, root)
		if err != nil {
			s.opts.Log.Warn("a workflow is not loaded", "id", f.id, "err", err)
			continue
		}
		s.mu.Lock()
		kept := s.external[:0]
		for _, l := range s.external {
			if l.def.ID != d.ID {
				kept = append(kept, l)
			}
		}
		s.external = append(kept, &loaded{def: d, sourceRoot: root})
		s.mu.Unlock()
		loadedIDs = append(loadedIDs, d.ID)
	}
	o := jsonorder.NewObject()
	o.Set("schemaVersion", json.Number("2"))
	o.Set("loaded", loadedIDs)
	o.Set("source", sourceExternal)
	o.Set("sourceRoot", root)
	o.Set("path", dir)
	return o, nil
}

// readDefinition reads and checks workflow id from file: an error says
// why it cannot be used.
func readDefinition(sc *scope, id, file, sourceRoot string) (*workflows.Definition, error) {
	data, err := sc.readFile(file)
	if err != nil {
		return nil, err
	}
	d := workflows.Define(id, data, file, sourceRoot)
	if d.Usable(navigator.Compatible) {
		return d, nil
	}
	var reasons []string
	for _, p := range d.Problems {
		if d.Workflow == nil || p.Blocks(navigator.Compatible) {
			reasons = append(reasons, p.Reason)
		}
	}
	if d.Workflow == nil {
		return nil, errors.New(strings.Join(reasons, "; "))
	}
	return nil, errors.New("invalid schema: " + strings.Join(reasons, "; "))
}

func idError(id, msg string) *jsonorder.Object {
	o := jsonorder.NewObject()
	o.Set("id", id)
	o.Set("error", msg)
	return o
}
