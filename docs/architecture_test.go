package docs

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/task"
)

var update = flag.Bool("update", false, "rewrite the generated parts of architecture.md")

// page is the page whose package map and state diagram are generated.
const page = "architecture.md"

// A pkg is one package of the module as the map shows it.
type pkg struct {
	rel     string              // its path relative to the module root
	doc     string              // its package comment's first sentence
	imports map[string][]string // "", "test" or "external test" → module packages it imports
}

// readModule reads every package of the module at root: its comment and
// its imports of the module's packages, for the build contexts of Linux
// and macOS (their union).
func readModule(root string) (map[string]*pkg, error) {
	modPath, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	pkgs := map[string]*pkg{}
	err = filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if dir != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && dir != root {
			return filepath.SkipDir // another module
		}
		rel, _ := filepath.Rel(root, dir)
		p, err := readPackage(dir, filepath.ToSlash(rel), modPath)
		if p != nil {
			pkgs[p.rel] = p
		}
		return err
	})
	return pkgs, err
}

// readPackage reads the package in dir, or returns nil when there is none.
func readPackage(dir, rel, modPath string) (*pkg, error) {
	p := &pkg{rel: rel, imports: map[string][]string{}}
	found := false
	for _, goos := range []string{"linux", "darwin"} {
		ctxt := build.Default
		ctxt.GOOS = goos
		bp, err := ctxt.ImportDir(dir, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
		found = true
		for kind, paths := range map[string][]string{"": bp.Imports, "test": bp.TestImports, "external test": bp.XTestImports} {
			for _, path := range paths {
				to, ok := strings.CutPrefix(path, modPath+"/")
				if !ok || to == rel || slices.Contains(p.imports[kind], to) {
					continue
				}
				p.imports[kind] = append(p.imports[kind], to)
			}
		}
		if p.doc == "" {
			p.doc = synopsis(dir, bp)
		}
	}
	if !found {
		return nil, nil
	}
	return p, nil
}

// synopsis returns the first sentence of the package comment of bp, from
// its files, else (a package of tests only) its test files.
func synopsis(dir string, bp *build.Package) string {
	for _, files := range [][]string{bp.GoFiles, bp.XTestGoFiles, bp.TestGoFiles} {
		for _, name := range files {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err == nil && f.Doc != nil {
				return new(doc.Package).Synopsis(f.Doc.Text())
			}
		}
	}
	return ""
}

// modulePath reads the module path from root's go.mod.
func modulePath(root string) (string, error) {
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(p), `"`), nil
		}
	}
	return "", fmt.Errorf("%s/go.mod names no module", root)
}

// checkLayers returns what is wrong with the module's packages against
// the layers and their exceptions: a package in no layer or in two, a
// layer's package that does not exist, a package without a comment, an
// import that runs upward, an exception that no longer occurs.
func checkLayers(pkgs map[string]*pkg, layers []layer, exceptions map[edge]string) []string {
	var problems []string
	order := map[string]int{}
	for _, l := range layers {
		for _, rel := range l.pkgs {
			if _, dup := order[rel]; dup {
				problems = append(problems, fmt.Sprintf("%s is in two places of the layers", rel))
				continue
			}
			order[rel] = len(order)
			if pkgs[rel] == nil {
				problems = append(problems, fmt.Sprintf("%s is in the layers (layer %q) but is no package of the module", rel, l.name))
			}
		}
	}
	used := map[edge]bool{}
	for _, rel := range slices.Sorted(maps.Keys(pkgs)) {
		p := pkgs[rel]
		from, placed := order[rel]
		if !placed {
			problems = append(problems, fmt.Sprintf("%s is in no layer: add it to the layer it belongs to in docs/layers_test.go", rel))
			continue
		}
		if p.doc == "" {
			problems = append(problems, fmt.Sprintf("%s has no package comment to show in the map", rel))
		}
		for _, kind := range []string{"", "test", "external test"} {
			for _, to := range p.imports[kind] {
				e := edge{rel, to}
				if _, ok := exceptions[e]; ok {
					used[e] = true
					continue
				}
				if at, ok := order[to]; ok && at < from {
					what := " imports"
					if kind != "" {
						what = "'s " + kind + "s import"
					}
					problems = append(problems, fmt.Sprintf("%s%s %s, which is above it in the layers: invert the dependency, move a package, or add the import to exceptions (docs/layers_test.go) with its reason", rel, what, to))
				}
			}
		}
	}
	for e := range exceptions {
		if !used[e] {
			problems = append(problems, fmt.Sprintf("the exception %s → %s is no import of the module any more: remove it", e.from, e.to))
		}
	}
	slices.Sort(problems)
	return problems
}

// TestLayers: every package of the module is in one layer, has a package
// comment, and imports only packages below it (or an exception).
func TestLayers(t *testing.T) {
	pkgs, err := readModule("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkLayers(pkgs, layers, exceptions) {
		t.Error(p)
	}
}

// TestCheckLayers: the check finds each kind of problem in a small module.
func TestCheckLayers(t *testing.T) {
	pkgs := map[string]*pkg{
		"top":    {rel: "top", doc: "Top.", imports: map[string][]string{"": {"mid", "low"}}},
		"mid":    {rel: "mid", doc: "Mid.", imports: map[string][]string{"": {"low"}, "test": {"top"}}},
		"low":    {rel: "low", doc: "Low.", imports: map[string][]string{"external test": {"mid"}}},
		"stray":  {rel: "stray", doc: "Stray."},
		"silent": {rel: "silent"},
	}
	ls := []layer{{name: "a", pkgs: []string{"top", "mid"}}, {name: "b", pkgs: []string{"low", "silent", "gone", "mid"}}}
	got := checkLayers(pkgs, ls, map[edge]string{{"low", "mid"}: "allowed", {"low", "top"}: "stale"})
	want := []string{
		"gone is in the layers (layer \"b\") but is no package of the module",
		"mid is in two places of the layers",
		"mid's tests import top, which is above it in the layers: invert the dependency, move a package, or add the import to exceptions (docs/layers_test.go) with its reason",
		"silent has no package comment to show in the map",
		"stray is in no layer: add it to the layer it belongs to in docs/layers_test.go",
		"the exception low → top is no import of the module any more: remove it",
	}
	if !slices.Equal(got, want) {
		t.Errorf("checkLayers:\ngot  %q\nwant %q", got, want)
	}
}

// TestArchitecture: the package map and the state diagram of
// architecture.md are the ones the code gives; -update rewrites them.
func TestArchitecture(t *testing.T) {
	pkgs, err := readModule("..")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	want := got
	for _, s := range []struct{ name, text string }{
		{"map", packageMap(pkgs)},
		{"states", stateMachine()},
	} {
		want, err = replaceBetween(want, s.name, s.text)
		if err != nil {
			t.Fatal(err)
		}
	}
	if *update && got != want {
		if err := os.WriteFile(page, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("%s is out of date with the code; run: go generate ./docs\n%s", page, firstDiff(got, want))
	}
}

// replaceBetween replaces what lies between <!-- name:begin --> and
// <!-- name:end --> in doc with text.
func replaceBetween(doc, name, text string) (string, error) {
	begin, end := "<!-- "+name+":begin -->\n", "<!-- "+name+":end -->"
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("%s has no %q … %q markers", page, strings.TrimSpace(begin), end)
	}
	return doc[:i+len(begin)] + text + doc[j:], nil
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n  have %s\n  want %s", i+1, gl, wl)
		}
	}
	return ""
}

// packageMap renders the layers: for each, its role and a table of its
// packages with their comments and imports.
func packageMap(pkgs map[string]*pkg) string {
	var b strings.Builder
	for i, l := range layers {
		fmt.Fprintf(&b, "### %d. %s\n\n%s\n\n", i+1, l.name, l.about)
		b.WriteString("| package | its comment | imports |\n|---|---|---|\n")
		for _, rel := range l.pkgs {
			p := pkgs[rel]
			if p == nil {
				continue
			}
			var imps []string
			for _, to := range inLayerOrder(p.imports[""]) {
				imps = append(imps, "`"+to+"`")
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", rel, cell.Replace(p.doc), strings.Join(imps, ", "))
		}
		b.WriteString("\n")
	}
	if len(exceptions) == 0 {
		b.WriteString("No import runs against the layers.\n")
		return b.String()
	}
	b.WriteString("Imports against the layers, each allowed for its reason:\n\n")
	for _, e := range slices.SortedFunc(maps.Keys(exceptions), func(a, b edge) int {
		return strings.Compare(a.from+" "+a.to, b.from+" "+b.to)
	}) {
		fmt.Fprintf(&b, "- `%s` imports `%s`: %s\n", e.from, e.to, exceptions[e])
	}
	return b.String()
}

// cell escapes what a Markdown table cell cannot hold as it is.
var cell = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;")

// inLayerOrder sorts package paths by their place in the layers.
func inLayerOrder(rels []string) []string {
	var order []string
	for _, l := range layers {
		order = append(order, l.pkgs...)
	}
	out := slices.Clone(rels)
	slices.SortFunc(out, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
	return out
}

// effectNames are the effects of a transition, as the table prints them.
var effectNames = []struct {
	e    task.Effects
	name string
}{
	{task.StartAgent, "StartAgent"}, {task.StopAgent, "StopAgent"}, {task.Ended, "Ended"},
	{task.Unblocked, "Unblocked"}, {task.Schedule, "Schedule"},
}

// effectsString names the effects of e, or panics on one effectNames
// lacks (a new effect must be named to be drawn).
func effectsString(e task.Effects) string {
	var names []string
	left := e
	for _, n := range effectNames {
		if e.Has(n.e) {
			names = append(names, n.name)
			left &^= n.e
		}
	}
	if left != 0 {
		panic(fmt.Sprintf("effects %b have no name in effectNames", left))
	}
	if len(names) == 0 {
		return "—"
	}
	return strings.Join(names, ", ")
}

// stateName is a state as the page shows it.
func stateName(s task.State) string {
	if s == task.None {
		return "pending"
	}
	return string(s)
}

// stateMachine renders task.Next over every state and event: a Mermaid
// diagram and a table of each event's transitions.
func stateMachine() string {
	type move struct {
		from, to task.State
		eff      task.Effects
	}
	moves := map[task.Event][]move{}
	labels := map[[2]task.State][]string{}
	var pairs [][2]task.State
	n := 0
	for _, ev := range task.Events {
		for _, from := range task.States {
			to, eff, err := task.Next(from, ev)
			if err != nil {
				continue
			}
			n++
			moves[ev] = append(moves[ev], move{from, to, eff})
			k := [2]task.State{from, to}
			if labels[k] == nil {
				pairs = append(pairs, k)
			}
			labels[k] = append(labels[k], ev.String())
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d transitions of %d states on %d events.\n\n```mermaid\nstateDiagram-v2\n", n, len(task.States), len(task.Events))
	for _, k := range pairs {
		fmt.Fprintf(&b, "    %s --> %s: %s\n", stateName(k[0]), stateName(k[1]), strings.Join(labels[k], ", "))
	}
	b.WriteString("```\n\n| event | from | to | then |\n|---|---|---|---|\n")
	for _, ev := range task.Events {
		// One row per destination and effects: Cancel stops an agent
		// only where one runs.
		type row struct {
			to   task.State
			eff  task.Effects
			from []string
		}
		var rows []*row
		for _, m := range moves[ev] {
			i := slices.IndexFunc(rows, func(r *row) bool { return r.to == m.to && r.eff == m.eff })
			if i < 0 {
				rows = append(rows, &row{to: m.to, eff: m.eff})
				i = len(rows) - 1
			}
			rows[i].from = append(rows[i].from, stateName(m.from))
		}
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", ev, strings.Join(r.from, ", "), stateName(r.to), effectsString(r.eff))
		}
	}
	return b.String()
}
