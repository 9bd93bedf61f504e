package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/taskd/taskd/internal/jsonorder"
	"github.com/taskd/taskd/workflows"
)

// This file holds flow's tools that list: ListWorkflows, SelectWorkflow
// and ListCatalog. Their answers have flow's shape; the words offered to a
// person (hints, questions, option labels) are taskd's.

// listWorkflows is flow's ListWorkflows.
func (s *Server) listWorkflows(_ context.Context, sc *scope, args *jsonorder.Object) (any, error) {
	filter, err := stringArg(args, "source")
	if err != nil {
		return nil, err
	}
	all := s.all(sc)
	hasProject := false
	for _, e := range all {
		hasProject = hasProject || e.source == sourceProject
	}
	if filter == "" {
		filter = "all"
		if hasProject {
			filter = sourceProject
		}
	}
	o := jsonorder.NewObject()
	o.Set("schemaVersion", json.Number("2"))
	o.Set("workflows", summaries(all, filter))
	o.Set("filter", filter)
	o.Set("hasProjectWorkflows", hasProject)
	if hasProject && filter == sourceProject {
		o.Set("hint", "These are the project's workflows; source \"all\" lists taskd's built-in ones too.")
	}
	return o, nil
}

// summaries is flow's list of workflows of source filter ("all" for
// every one): id, name, description, stepCount, source.
func summaries(entries []*entry, filter string) []any {
	out := []any{}
	for _, e := range entries {
		if filter != "all" && e.source != filter {
			continue
		}
		wf := e.def.Workflow
		o := jsonorder.NewObject()
		o.Set("id", e.def.ID)
		o.Set("name", firstOf(wf.Name, e.def.ID))
		o.Set("description", wf.Description)
		o.Set("stepCount", len(wf.Nodes()))
		o.Set("source", e.source)
		out = append(out, o)
	}
	return out
}

// selectWorkflow is flow's SelectWorkflow: every workflow, and questions
// that offer them, at most four options a question (AskUserQuestion's
// limit): the project's own workflows first, then taskd's in the order of
// preferredWorkflows, then the rest.
func (s *Server) selectWorkflow(_ context.Context, sc *scope, _ *jsonorder.Object) (any, error) {
	all := summaries(s.all(sc), "all")
	var ordered []*jsonorder.Object
	rank := func(o *jsonorder.Object) int {
		if src, _ := o.String("source"); src != sourceCatalog {
			return -1
		}
		id, _ := o.String("id")
		for i, p := range preferredWorkflows {
			if p == id {
				return i
			}
		}
		return len(preferredWorkflows)
	}
	for _, v := range all {
		ordered = append(ordered, v.(*jsonorder.Object))
	}
	slices.SortStableFunc(ordered, func(a, b *jsonorder.Object) int { return cmp.Compare(rank(a), rank(b)) })
	dialog := []any{}
	for i, q := range []struct{ question, header string }{
		{"Which workflow should the task follow?", "Workflow"},
		{"Or one of these?", "More"},
	} {
		lo, hi := 4*i, min(4*i+4, len(ordered))
		if hi-lo < 2 {
			break
		}
		options := []any{}
		for _, w := range ordered[lo:hi] {
			name, _ := w.String("name")
			desc, _ := w.String("description")
			n, _ := w.Int("stepCount")
			opt := jsonorder.NewObject()
			opt.Set("label", name)
			opt.Set("description", strings.TrimSpace(desc+" ("+strconv.FormatInt(n, 10)+" steps)"))
			options = append(options, opt)
		}
		d := jsonorder.NewObject()
		d.Set("question", q.question)
		d.Set("header", q.header)
		d.Set("multiSelect", false)
		d.Set("options", options)
		dialog = append(dialog, d)
	}
	o := jsonorder.NewObject()
	o.Set("schemaVersion", json.Number("2"))
	o.Set("workflows", all)
	o.Set("dialog", dialog)
	return o, nil
}

// preferredWorkflows orders taskd's built-in workflows in SelectWorkflow's
// questions: the everyday ones first.
var preferredWorkflows = []string{"feature-development", "bug-fix", "quick-task", "refactor", "test-coverage", "code-review", "implement-test-review"}

// listCatalog is flow's ListCatalog: taskd's built-in workflows and agent
// templates, each with options for AskUserQuestion.
func (s *Server) listCatalog(context.Context, *scope, *jsonorder.Object) (any, error) {
	wfs, wfOptions := []any{}, []any{}
	for _, d := range workflows.Builtin() {
		wf := d.Workflow
		o := jsonorder.NewObject()
		o.Set("id", firstOf(wf.ID, d.ID))
		o.Set("name", firstOf(wf.Name, wf.ID, d.ID))
		o.Set("description", wf.Description)
		o.Set("stepCount", len(wf.Nodes()))
		wfs = append(wfs, o)
		wfOptions = append(wfOptions, option(firstOf(wf.Name, wf.ID, d.ID), fmt.Sprintf("%s (%d steps)", wf.Description, len(wf.Nodes()))))
	}
	agents, agentOptions := []any{}, []any{}
	for _, a := range workflows.Agents() {
		o := jsonorder.NewObject()
		o.Set("id", a.ID)
		o.Set("name", firstOf(a.Name, a.ID))
		o.Set("description", a.Description)
		if a.Model != "" {
			o.Set("model", a.Model)
		}
		agents = append(agents, o)
		agentOptions = append(agentOptions, option(firstOf(a.Name, a.ID), a.Description))
	}
	if len(wfs) > 0 {
		wfOptions = append([]any{option("All workflows", fmt.Sprintf("Copy all %d of taskd's workflows into the project", len(wfs)))}, wfOptions...)
	}
	if len(agents) > 0 {
		agentOptions = append([]any{option("All agents", fmt.Sprintf("Copy all %d agent templates into the project", len(agents)))}, agentOptions...)
	}
	o := jsonorder.NewObject()
	o.Set("schemaVersion", json.Number("3"))
	o.Set("workflows", wfs)
	o.Set("workflowSelectionOptions", wfOptions)
	o.Set("agents", agents)
	o.Set("agentSelectionOptions", agentOptions)
	return o, nil
}

func option(label, description string) *jsonorder.Object {
	o := jsonorder.NewObject()
	o.Set("label", label)
	o.Set("description", description)
	return o
}

// firstOf returns the first of s that is not empty.
func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
