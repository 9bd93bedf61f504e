package task_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/task"
)

// TestDaemonFieldsWrittenOnlyHere: the fields of a task's Record (Keys)
// are written only by this package (Apply, End, Store, Begin, Archive,
// Unclaim). The test reads every Go file of the module outside
// daemon/task and taskfile and fails on a Set, Delete or EnsureObject of
// one of those keys, by a constant, on metadata.taskd: a value that is
// Object("taskd"), EnsureObject("taskd"), Get("taskd") or task.Meta(…), a
// variable assigned one, or a parameter some call is handed one (followed
// through the module's functions by name); on a call of a helper that
// writes its key parameter on such a value with one of those keys; and on
// such a write of the variable of a range over a list of keys that holds
// one.
func TestDaemonFieldsWrittenOnlyHere(t *testing.T) {
	m := parseModule(t, filepath.Join("..", ".."))
	for _, v := range m.violations(task.Keys) {
		t.Errorf("%s: raw write of metadata.taskd.%s; change the task's Record (task.Apply, task.Store)", v.pos, v.key)
	}
}

// TestDaemonFieldsCheckFails: the check above finds the ways a raw write
// is made, in a planted module.
func TestDaemonFieldsCheckFails(t *testing.T) {
	dir := t.TempDir()
	src := `package x

import "github.com/taskd/taskd/daemon/task"

func direct(t *taskfile.Task) {
	t.Metadata.Object("taskd").Set("error", "x")
	task.Meta(t).Delete("retryAt")
}

func viaVar(t *taskfile.Task) {
	m := task.Meta(t)
	n := m
	n.Set("finishedAt", "now")
	entry := taskfile.NewObject()
	entry.Set("result", 1) // not metadata.taskd
	m.Set("prompt", "p")   // not the daemon's
}

func viaParam(t *taskfile.Task) {
	clear(t.Metadata.Object("taskd"))
	put(task.Meta(t), "attempt", 2)
	setRecord(task.Meta(t), "stepTrace", []any{1})
}

func setRecord(m *taskfile.Object, key string, v any) { m.Set(key, v) }

func clear(m *taskfile.Object) { m.Delete("startedAt") }

func put(m *taskfile.Object, key string, v any) { m.Set(key, v) }

func loop(t *taskfile.Task) {
	m := task.Meta(t)
	for _, k := range []string{"cancel", "failures"} {
		m.Delete(k)
	}
	for _, k := range cleared {
		m.Delete(k)
	}
}

var cleared = []string{"hitl", "interrupted"}
`
	if err := writeFile(filepath.Join(dir, "x.go"), src); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range parseModule(t, dir).violations(task.Keys) {
		got = append(got, v.key)
	}
	slices.Sort(got)
	want := []string{"attempt", "error", "failures", "finishedAt", "hitl", "interrupted", "retryAt", "startedAt", "stepTrace"}
	if !slices.Equal(got, want) {
		t.Errorf("violations %v, want %v", got, want)
	}
}

type module struct {
	fset  *token.FileSet
	files []*ast.File
	funcs map[string][]*ast.FuncDecl // by name
	lists map[string][]string        // package-level lists of strings, by name
}

type violation struct {
	pos token.Position
	key string
}

// parseModule parses the non-test Go files under root, outside
// daemon/task, taskfile, testdata, bench and .git.
func parseModule(t *testing.T, root string) *module {
	t.Helper()
	m := &module{fset: token.NewFileSet(), funcs: map[string][]*ast.FuncDecl{}, lists: map[string][]string{}}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch rel {
			case filepath.Join("daemon", "task"), "taskfile", "testdata", ".git", "bench":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(m.fset, path, nil, 0)
		if err != nil {
			return err
		}
		m.files = append(m.files, f)
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				m.funcs[fd.Name.Name] = append(m.funcs[fd.Name.Name], fd)
			}
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				for _, sp := range gd.Specs {
					vs := sp.(*ast.ValueSpec)
					for i, id := range vs.Names {
						if i < len(vs.Values) {
							m.lists[id.Name] = append(m.lists[id.Name], stringsOf(vs.Values[i])...)
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// scope is what a function's body knows: the names that hold
// metadata.taskd.
type scope map[string]bool

// holds reports whether e is metadata.taskd in scope s.
func (s scope) holds(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return s.holds(e.X)
	case *ast.Ident:
		return s[e.Name]
	case *ast.TypeAssertExpr:
		return s.holds(e.X)
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == "task" && sel.Sel.Name == "Meta" {
			return true
		}
		switch sel.Sel.Name {
		case "Object", "EnsureObject", "Get":
			return len(e.Args) == 1 && constKey(e.Args[0]) == "taskd"
		}
	}
	return false
}

// stringsOf returns the constant strings of e, a list literal.
func stringsOf(e ast.Expr) []string {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	var out []string
	for _, el := range lit.Elts {
		if k := constKey(el); k != "" {
			out = append(out, k)
		}
	}
	return out
}

func constKey(e ast.Expr) string {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return ""
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return s
}

// params lists fd's parameter names in order ("" for unnamed).
func params(fd *ast.FuncDecl) []string {
	var names []string
	for _, f := range fd.Type.Params.List {
		if len(f.Names) == 0 {
			names = append(names, "")
		}
		for _, n := range f.Names {
			names = append(names, n.Name)
		}
	}
	return names
}

// calleeName is the name of the function call calls: f or x.f.
func calleeName(call *ast.CallExpr) string {
	switch f := call.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

// violations follows metadata.taskd through the module's functions until
// nothing new is learnt, then lists the raw writes of keys.
func (m *module) violations(keys []string) []violation {
	held := map[*ast.FuncDecl]map[int]bool{}    // parameters handed metadata.taskd
	keyParam := map[*ast.FuncDecl]map[int]int{} // a key parameter written on a held parameter
	scopeOf := func(fd *ast.FuncDecl) scope {
		s := scope{}
		ps := params(fd)
		for i := range held[fd] {
			if i < len(ps) && ps[i] != "" {
				s[ps[i]] = true
			}
		}
		for changed := true; changed; {
			changed = false
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				var lhs, rhs []ast.Expr
				switch n := n.(type) {
				case *ast.AssignStmt:
					lhs, rhs = n.Lhs, n.Rhs
				case *ast.ValueSpec:
					for _, id := range n.Names {
						lhs = append(lhs, id)
					}
					rhs = n.Values
				}
				if len(rhs) != len(lhs) {
					return true
				}
				for i, l := range lhs {
					if id, ok := l.(*ast.Ident); ok && !s[id.Name] && s.holds(rhs[i]) {
						s[id.Name], changed = true, true
					}
				}
				return true
			})
		}
		return s
	}
	for changed := true; changed; {
		changed = false
		for _, fds := range m.funcs {
			for _, fd := range fds {
				s := scopeOf(fd)
				ps := params(fd)
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Set" || sel.Sel.Name == "Delete") && len(call.Args) > 0 && s.holds(sel.X) {
						if id, ok := call.Args[0].(*ast.Ident); ok {
							if i := slices.Index(ps, id.Name); i >= 0 {
								if keyParam[fd] == nil {
									keyParam[fd] = map[int]int{}
								}
								x, _ := sel.X.(*ast.Ident)
								if x != nil {
									if j := slices.Index(ps, x.Name); j >= 0 {
										if _, seen := keyParam[fd][i]; !seen {
											keyParam[fd][i], changed = j, true
										}
									}
								}
							}
						}
					}
					for i, a := range call.Args {
						if !s.holds(a) {
							continue
						}
						for _, callee := range m.funcs[calleeName(call)] {
							if held[callee] == nil {
								held[callee] = map[int]bool{}
							}
							if !held[callee][i] {
								held[callee][i], changed = true, true
							}
						}
					}
					return true
				})
			}
		}
	}
	var out []violation
	for _, fds := range m.funcs {
		for _, fd := range fds {
			s := scopeOf(fd)
			ranged := map[string][]string{} // a range variable: the keys of its list
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if r, ok := n.(*ast.RangeStmt); ok {
					v, _ := r.Value.(*ast.Ident)
					list := stringsOf(r.X)
					if id, ok := r.X.(*ast.Ident); ok {
						list = m.lists[id.Name]
					}
					if v == nil {
						return true
					}
					ranged[v.Name] = nil // this range's list, from here on
					for _, k := range list {
						if slices.Contains(keys, k) {
							ranged[v.Name] = append(ranged[v.Name], k)
						}
					}
					return true
				}
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Set" || sel.Sel.Name == "Delete") && len(call.Args) > 0 && s.holds(sel.X) {
					if id, ok := call.Args[0].(*ast.Ident); ok {
						for _, k := range ranged[id.Name] {
							out = append(out, violation{m.fset.Position(call.Pos()), k})
						}
					}
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && len(call.Args) > 0 && s.holds(sel.X) {
					switch sel.Sel.Name {
					case "Set", "Delete", "EnsureObject":
						if k := constKey(call.Args[0]); slices.Contains(keys, k) {
							out = append(out, violation{m.fset.Position(call.Pos()), k})
						}
					}
				}
				for _, callee := range m.funcs[calleeName(call)] {
					for ki, mi := range keyParam[callee] {
						if ki < len(call.Args) && mi < len(call.Args) && s.holds(call.Args[mi]) {
							if k := constKey(call.Args[ki]); slices.Contains(keys, k) {
								out = append(out, violation{m.fset.Position(call.Pos()), k})
							}
						}
					}
				}
				return true
			})
		}
	}
	slices.SortFunc(out, func(a, b violation) int { return strings.Compare(a.pos.String(), b.pos.String()) })
	return out
}

func writeFile(path, data string) error { return os.WriteFile(path, []byte(data), 0o644) }
