package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/taskd/taskd/internal/termtext"
	"github.com/taskd/taskd/navigator"
	"github.com/taskd/taskd/workflows"
)

func init() {
	register(&command{
		name:  "workflows",
		usage: "list [--json] | show ID | validate [FILE...] | diagram ID   [--workflows DIR]... [--list DIR]",
		short: "list, show, validate and draw workflows",
		group: "Workflows",
		long: `
Workflows works with the workflow definitions taskd knows: the built-ins,
then $XDG_CONFIG_HOME/taskd/workflows, then <list>/.taskd/workflows for the
list given with --list, then each --workflows directory, a later definition of
an id replacing an earlier one. A directory holds <id>.json files (or
<id>/workflow.json). A file there that cannot be read (a FIFO, a directory,
a link in a list's own directory) defines nothing: list names it on standard
error, validate fails on it, show and diagram of its id say why.

	list            every workflow: id, number of nodes, where it comes from,
	                name; definitions with errors are marked (--json: one JSON
	                array of {id, name, description, file, builtin, ok,
	                problems})
	show ID         print the definition of ID as written
	validate FILE   check workflow files and print every problem as
	                FILE: node "ID": reason; without files, check every
	                definition taskd would load. Exit status 1 if any has
	                errors, traps included (warnings alone pass)
	diagram ID      print ID as a Mermaid flowchart

	--workflows DIR  also load workflows from DIR (repeatable)
	--list DIR       also load DIR/.taskd/workflows (a task list's own)

The format, the "command" extension and the validation rules are described in
docs/workflows.md. Show and diagram fail (status 1) for an id no
definition has; a missing or unknown subcommand prints the usage (status
2).
`,
		run: runWorkflows,
	})
}

func runWorkflows(ctx context.Context, inv *invocation) error {
	if len(inv.args) == 0 {
		return inv.usageErrorf("missing subcommand: list, show, validate or diagram")
	}
	sub := inv.args[0]
	inv.args = inv.args[1:]
	fs := inv.flags()
	var dirs stringList
	fs.Var(&dirs, "workflows", "")
	list := fs.String("list", "", "")
	asJSON := fs.Bool("json", false, "")
	if err := inv.parse(fs); err != nil {
		return err
	}
	args := fs.Args()
	load := func() *workflows.Set {
		set, _ := workflows.Load(append(workflows.Dirs(*list), dirs...)...)
		return set
	}
	lookup := func() (*workflows.Definition, error) {
		if len(args) != 1 {
			return nil, inv.usageErrorf("%s takes one workflow id", sub)
		}
		set := load()
		d, ok := set.Get(args[0])
		if !ok {
			return nil, noWorkflow(args[0], set)
		}
		return d, nil
	}
	switch sub {
	case "list":
		if len(args) > 0 {
			return inv.usageErrorf("list takes no arguments")
		}
		set := load()
		for _, p := range set.Unread() {
			fmt.Fprintf(inv.stderr, "taskd: %s\n", p)
		}
		return listWorkflows(inv, set, *asJSON)
	case "show":
		d, err := lookup()
		if err != nil {
			return err
		}
		_, err = inv.stdout.Write(d.Data)
		return err
	case "diagram":
		d, err := lookup()
		if err != nil {
			return err
		}
		if d.Workflow == nil {
			return fmt.Errorf("workflow %q (%s) is not valid JSON; run 'taskd workflows validate %s'", d.ID, d.File, d.File)
		}
		_, err = fmt.Fprint(inv.stdout, workflows.Diagram(d.Workflow))
		return err
	case "validate":
		return validateWorkflows(inv, load, args)
	}
	return inv.usageErrorf("unknown subcommand %q: want list, show, validate or diagram", sub)
}

// noWorkflow is the error for an id no definition of set has: a file
// that would define it but could not be read says why.
func noWorkflow(id string, set *workflows.Set) error {
	if p, ok := set.UnreadOf(id); ok {
		return fmt.Errorf("no workflow %q: %s", id, p)
	}
	return fmt.Errorf("no workflow %q; run 'taskd workflows list' for the list", id)
}

func listWorkflows(inv *invocation, set *workflows.Set, asJSON bool) error {
	type entry struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		File        string   `json:"file"`
		Builtin     bool     `json:"builtin"`
		OK          bool     `json:"ok"`
		Problems    []string `json:"problems"`
	}
	var entries []entry
	for _, id := range set.IDs() {
		d, _ := set.Get(id)
		e := entry{ID: id, File: d.File, Builtin: d.Builtin, OK: d.OK(), Problems: []string{}}
		if wf := d.Workflow; wf != nil {
			e.Name, e.Description = wf.Name, wf.Description
		}
		for _, p := range d.Problems {
			e.Problems = append(e.Problems, p.String())
		}
		entries = append(entries, e)
	}
	if asJSON {
		enc := json.NewEncoder(inv.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(entries)
	}
	tw := tabwriter.NewWriter(inv.stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNODES\tSOURCE\tNAME")
	for _, e := range entries {
		d, _ := set.Get(e.ID)
		nodes := "-"
		if d.Workflow != nil {
			nodes = fmt.Sprint(len(d.Workflow.Nodes()))
		}
		source := e.File
		if e.Builtin {
			source = "built-in"
		}
		name := e.Name
		if !e.OK {
			name = "INVALID (taskd workflows validate): " + name
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", termtext.Clean(e.ID), nodes, termtext.Clean(source), termtext.Clean(name))
	}
	return tw.Flush()
}

// validateWorkflows checks the given files, or every loaded definition,
// and prints one line per problem (or "ok").
func validateWorkflows(inv *invocation, load func() *workflows.Set, files []string) error {
	var defs []*workflows.Definition
	failed := false
	if len(files) == 0 {
		set := load()
		for _, id := range set.IDs() {
			d, _ := set.Get(id)
			defs = append(defs, d)
		}
		for _, p := range set.Unread() {
			fmt.Fprintln(inv.stdout, p)
		}
		failed = navigator.HasErrors(set.Unread())
	}
	for _, f := range files {
		d, err := workflows.LoadFile(f)
		if err != nil {
			fmt.Fprintf(inv.stdout, "%s: %v\n", f, err)
			failed = true
			continue
		}
		defs = append(defs, d)
	}
	for _, d := range defs {
		if len(d.Problems) == 0 {
			fmt.Fprintf(inv.stdout, "%s: ok\n", d.File)
		}
		for _, p := range d.Problems {
			fmt.Fprintln(inv.stdout, p)
		}
		failed = failed || navigator.HasErrors(d.Problems)
	}
	if failed {
		return &exitError{code: 1, err: errors.New("some workflows have errors")}
	}
	return nil
}
