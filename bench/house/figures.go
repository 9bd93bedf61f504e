package main

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// The packages and types the figures are about, relative to the module.
const (
	taskPkg    = "daemon/task"   // owns metadata.taskd
	configPkg  = "daemon/config" // the table of agent kinds
	daemonPkg  = "daemon"
	daemonType = "Daemon"
	jobPkg     = "daemon/job"
	jobType    = "Job"
)

// Thresholds of the figures.
const (
	maxParams = 5  // a function with more parameters is counted
	maxLines  = 80 // a function longer than this is counted
)

// kindWords are the strings that tell agent kinds apart: the built-in
// profiles' names (also their "flags") and the output formats that belong
// to one kind.
var kindWords = map[string]bool{
	"claude": true, "codex": true, "opencode": true, "exec": true,
	"claude-stream": true, "claude-json": true, "codex-json": true, "opencode-json": true,
}

// Figures are the counts of the house, from the module's non-test files.
type Figures struct {
	Packages int
	Files    int
	Lines    int // lines of the non-test files
	// LargestPkg holds the most lines; LargestLines is how many.
	LargestPkg   string
	LargestLines int

	KeyAccesses   []keyAccess // constant-key accesses to metadata.taskd outside taskPkg
	KeysInTask    int         // the same, inside taskPkg
	TaskdRoots    []string    // Object/EnsureObject/Get("taskd") outside taskPkg
	DaemonMethods []string    // methods declared on daemon.Daemon
	JobMethods    []string    // methods declared on job.Job
	JobMethodFile int         // files those of Job are in
	Exported      map[string]int
	Funcs         int
	LongFuncs     []string // functions over maxLines lines
	WideFuncs     []string // functions with more than maxParams parameters
	Untested      []string // packages without a _test.go file
	KindSwitches  []string // agent kinds told apart by string
}

// Keys returns the distinct keys of the accesses.
func (f *Figures) Keys() []string {
	var keys []string
	for _, a := range f.KeyAccesses {
		if !slices.Contains(keys, a.Key) {
			keys = append(keys, a.Key)
		}
	}
	slices.Sort(keys)
	return keys
}

// measure counts the figures of m.
func measure(m *module) *Figures {
	f := &Figures{Packages: len(m.Pkgs), Exported: map[string]int{}}
	lines := map[string]int{}
	for _, p := range m.Pkgs {
		if p.TestFiles == 0 {
			f.Untested = append(f.Untested, p.Rel)
		}
		f.Exported[p.Rel] = exported(p)
		for _, file := range p.Files {
			f.Files++
			n := m.Fset.File(file.Pos()).LineCount()
			f.Lines += n
			lines[p.Rel] += n
			f.funcs(m, file)
			f.kinds(m, p, file)
		}
	}
	for rel, n := range lines {
		if n > f.LargestLines || n == f.LargestLines && rel < f.LargestPkg {
			f.LargestPkg, f.LargestLines = rel, n
		}
	}
	if t := newTracker(m); t != nil {
		outside := func(p *pkg) bool { return p.Rel != taskPkg }
		f.KeyAccesses = t.accesses(outside)
		f.KeysInTask = len(t.accesses(func(p *pkg) bool { return p.Rel == taskPkg }))
		f.TaskdRoots = t.roots(outside)
	}
	f.DaemonMethods, _ = methods(m, daemonPkg, daemonType)
	f.JobMethods, f.JobMethodFile = methods(m, jobPkg, jobType)
	return f
}

// exported counts a package's exported names: its exported package-level
// identifiers and the exported methods of its types.
func exported(p *pkg) int {
	n := 0
	scope := p.Types.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if obj.Exported() {
			n++
		}
		if tn, ok := obj.(*types.TypeName); ok && !tn.IsAlias() {
			if named, ok := tn.Type().(*types.Named); ok {
				for i := range named.NumMethods() {
					if named.Method(i).Exported() {
						n++
					}
				}
			}
		}
	}
	return n
}

// methods returns the methods declared on the type name of package rel
// (promoted ones are not counted) and the number of files they are in.
func methods(m *module, rel, name string) ([]string, int) {
	p := m.pkgAt(rel)
	if p == nil {
		return nil, 0
	}
	tn, ok := p.Types.Scope().Lookup(name).(*types.TypeName)
	if !ok {
		return nil, 0
	}
	named, ok := tn.Type().(*types.Named)
	if !ok {
		return nil, 0
	}
	var out []string
	files := map[string]bool{}
	for i := range named.NumMethods() {
		fn := named.Method(i)
		out = append(out, fn.Name())
		files[m.file(fn.Pos())] = true
	}
	slices.Sort(out)
	return out, len(files)
}

// funcs counts a file's function declarations, the long ones and the
// ones with many parameters.
func (f *Figures) funcs(m *module, file *ast.File) {
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		f.Funcs++
		name := funcName(fd)
		start, end := m.Fset.Position(fd.Pos()).Line, m.Fset.Position(fd.End()).Line
		if end-start+1 > maxLines {
			f.LongFuncs = append(f.LongFuncs, m.pos(fd.Pos())+" "+name)
		}
		n := 0
		for _, field := range fd.Type.Params.List {
			n += max(1, len(field.Names))
		}
		if n > maxParams {
			f.WideFuncs = append(f.WideFuncs, m.pos(fd.Pos())+" "+name)
		}
	}
}

// funcName is a declaration's name, with its receiver's type for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// kinds finds where a file tells agent kinds apart by string: a comparison
// (== or !=) or a switch case of a non-constant value with a string
// constant that names a kind (kindWords). The configuration's table of
// kinds is a composite literal, not a comparison, and is not counted.
func (f *Figures) kinds(m *module, p *pkg, file *ast.File) {
	isKind := func(e ast.Expr) bool {
		s, ok := constString(p, e)
		return ok && kindWords[s]
	}
	isConst := func(e ast.Expr) bool {
		tv, ok := p.Info.Types[e]
		return ok && tv.Value != nil
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op != token.EQL && n.Op != token.NEQ {
				return true
			}
			if isKind(n.X) && !isConst(n.Y) || isKind(n.Y) && !isConst(n.X) {
				f.KindSwitches = append(f.KindSwitches, m.pos(n.Pos())+" "+exprString(n))
			}
		case *ast.SwitchStmt:
			if n.Tag == nil || isConst(n.Tag) {
				return true
			}
			for _, s := range n.Body.List {
				cc := s.(*ast.CaseClause)
				var words []string
				for _, e := range cc.List {
					if isKind(e) {
						w, _ := constString(p, e)
						words = append(words, w)
					}
				}
				if len(words) > 0 {
					f.KindSwitches = append(f.KindSwitches, m.pos(cc.Pos())+" switch "+exprString(n.Tag)+" case "+strings.Join(words, ", "))
				}
			}
		}
		return true
	})
}

// exprString prints a short expression for a listing.
func exprString(e ast.Expr) string {
	return types.ExprString(e)
}
