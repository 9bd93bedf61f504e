package main

import (
	"go/ast"
	"go/constant"
	"go/types"
	"slices"
)

// A keyAccess is one place that names a key of metadata.taskd by a
// constant: a method of the ordered JSON object (Get, String, Set, …)
// called on metadata.taskd with a constant key, or a call of a helper that
// is handed metadata.taskd and a constant string for a parameter it uses
// as a key.
type keyAccess struct {
	Pos    string // file:line, relative to the module root
	Pkg    string // the package, relative to the module root
	Call   string // the method or helper called
	Key    string
	Write  bool // Set, Delete, EnsureObject, or a helper that does one
	Helper bool
}

// keyMethods are the methods of the ordered object that take a key first;
// the ones that change the object are true.
var keyMethods = map[string]bool{
	"Has": false, "Get": false, "Object": false, "String": false, "Bool": false, "Int": false, "Float": false,
	"Set": true, "Delete": true, "EnsureObject": true,
}

// A tracker finds the values that hold metadata.taskd: the result of
// Object("taskd") (or EnsureObject, or Get asserted to *Object) on an
// ordered object, the variables, struct fields and parameters it is stored
// in or passed to, and the functions that return it. It is flow-insensitive:
// a variable that ever holds metadata.taskd is taken to hold it.
type tracker struct {
	m       *module
	object  *types.TypeName     // the ordered JSON object type
	vars    map[*types.Var]bool // variables, fields and parameters holding it
	funcs   map[*types.Func]int // functions returning it, and at which result
	written map[*types.Var]bool // vars holding it on which a writing method is called
	keyed   map[*types.Var]bool // parameters used as a key of an ordered object
}

// newTracker returns a tracker over m, or nil when m has no ordered JSON
// object type (package internal/jsonorder, type Object).
func newTracker(m *module) *tracker {
	p := m.pkgAt("internal/jsonorder")
	if p == nil {
		return nil
	}
	tn, ok := p.Types.Scope().Lookup("Object").(*types.TypeName)
	if !ok {
		return nil
	}
	t := &tracker{m: m, object: tn, vars: map[*types.Var]bool{}, funcs: map[*types.Func]int{}, written: map[*types.Var]bool{}, keyed: map[*types.Var]bool{}}
	for t.propagate() {
	}
	return t
}

// objectMethod returns the name of the ordered object's method that call
// calls, or "".
func (t *tracker) objectMethod(p *pkg, call *ast.CallExpr) (string, *ast.SelectorExpr) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", nil
	}
	s, ok := p.Info.Selections[sel]
	if !ok || s.Kind() != types.MethodVal {
		return "", nil
	}
	recv := s.Recv()
	if ptr, ok := recv.(*types.Pointer); ok {
		recv = ptr.Elem()
	}
	if named, ok := types.Unalias(recv).(*types.Named); !ok || named.Obj() != t.object {
		return "", nil
	}
	return sel.Sel.Name, sel
}

// constString returns the value of e when it is a string constant.
func constString(p *pkg, e ast.Expr) (string, bool) {
	tv, ok := p.Info.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(tv.Value), true
}

// isRoot reports whether call is Object("taskd"), EnsureObject("taskd") or
// Get("taskd") on an ordered object.
func (t *tracker) isRoot(p *pkg, call *ast.CallExpr) bool {
	name, _ := t.objectMethod(p, call)
	if name != "Object" && name != "EnsureObject" && name != "Get" || len(call.Args) == 0 {
		return false
	}
	k, ok := constString(p, call.Args[0])
	return ok && k == "taskd"
}

// holds reports whether e is metadata.taskd.
func (t *tracker) holds(p *pkg, e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return t.holds(p, e.X)
	case *ast.CallExpr:
		if name, _ := t.objectMethod(p, e); name != "Get" && t.isRoot(p, e) {
			return true
		}
		if fn := callee(p, e); fn != nil {
			i, ok := t.funcs[fn]
			return ok && i == 0
		}
	case *ast.TypeAssertExpr:
		return t.holds(p, e.X)
	case *ast.Ident:
		v, ok := p.Info.Uses[e].(*types.Var)
		return ok && t.vars[v]
	case *ast.SelectorExpr:
		if s, ok := p.Info.Selections[e]; ok && s.Kind() == types.FieldVal {
			v, _ := s.Obj().(*types.Var)
			return t.vars[v]
		}
	}
	return false
}

// callee returns the function or method call calls, its generic origin
// for an instance, or nil (a function value, a conversion, a builtin).
func callee(p *pkg, call *ast.CallExpr) *types.Func {
	fun := ast.Unparen(call.Fun)
	switch f := fun.(type) {
	case *ast.IndexExpr:
		fun = f.X
	case *ast.IndexListExpr:
		fun = f.X
	}
	var id *ast.Ident
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	default:
		return nil
	}
	fn, ok := p.Info.Uses[id].(*types.Func)
	if !ok {
		return nil
	}
	return fn.Origin()
}

// param returns the parameter of fn that argument i is passed to.
func param(fn *types.Func, i int) *types.Var {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Params().Len() == 0 {
		return nil
	}
	n := sig.Params().Len()
	if i >= n {
		if !sig.Variadic() {
			return nil
		}
		i = n - 1
	}
	return sig.Params().At(i)
}

// mark records v as holding metadata.taskd, reporting whether it is new.
func (t *tracker) mark(v *types.Var) bool {
	if v == nil || t.vars[v] {
		return false
	}
	t.vars[v] = true
	return true
}

// target returns the variable or field an assignment's left side names.
func target(p *pkg, e ast.Expr) *types.Var {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		if v, ok := p.Info.Defs[e].(*types.Var); ok {
			return v
		}
		v, _ := p.Info.Uses[e].(*types.Var)
		return v
	case *ast.SelectorExpr:
		if s, ok := p.Info.Selections[e]; ok && s.Kind() == types.FieldVal {
			v, _ := s.Obj().(*types.Var)
			return v
		}
	}
	return nil
}

// propagate makes one pass over the module, following metadata.taskd into
// what it is assigned, passed and returned to. It reports whether it found
// anything new.
func (t *tracker) propagate() bool {
	changed := false
	for _, p := range t.m.Pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if ok && fd.Body != nil {
					changed = t.returns(p, fd) || changed
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				changed = t.flow(p, n) || changed
				return true
			})
		}
	}
	return changed
}

// returns marks fd as returning metadata.taskd when one of its return
// statements (outside function literals) does.
func (t *tracker) returns(p *pkg, fd *ast.FuncDecl) bool {
	fn, ok := p.Info.Defs[fd.Name].(*types.Func)
	if !ok {
		return false
	}
	if _, done := t.funcs[fn]; done {
		return false
	}
	found := -1
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			for i, r := range n.Results {
				if found < 0 && t.holds(p, r) {
					found = i
				}
			}
		}
		return true
	})
	if found < 0 {
		return false
	}
	t.funcs[fn] = found
	return true
}

// flow follows metadata.taskd through one node: an assignment, a
// declaration, a struct literal's field or a call's argument.
func (t *tracker) flow(p *pkg, n ast.Node) bool {
	changed := false
	switch n := n.(type) {
	case *ast.AssignStmt:
		if len(n.Lhs) == len(n.Rhs) {
			for i, r := range n.Rhs {
				if t.holds(p, r) {
					changed = t.mark(target(p, n.Lhs[i])) || changed
				}
			}
		} else if len(n.Rhs) == 1 {
			if call, ok := ast.Unparen(n.Rhs[0]).(*ast.CallExpr); ok {
				if name, _ := t.objectMethod(p, call); name == "Get" && t.isRoot(p, call) {
					// v, ok := md.Get("taskd"): v.(*Object) is metadata.taskd.
					changed = t.mark(target(p, n.Lhs[0])) || changed
				} else if fn := callee(p, call); fn != nil {
					if i, ok := t.funcs[fn]; ok && i < len(n.Lhs) {
						changed = t.mark(target(p, n.Lhs[i])) || changed
					}
				}
			}
		}
	case *ast.ValueSpec:
		if len(n.Names) == len(n.Values) {
			for i, v := range n.Values {
				if t.holds(p, v) {
					changed = t.mark(target(p, n.Names[i])) || changed
				}
			}
		}
	case *ast.KeyValueExpr:
		if k, ok := n.Key.(*ast.Ident); ok && t.holds(p, n.Value) {
			if v, ok := p.Info.Uses[k].(*types.Var); ok && v.IsField() {
				changed = t.mark(v) || changed
			}
		}
	case *ast.CallExpr:
		changed = t.keys(p, n) || changed
		fn := callee(p, n)
		if fn == nil {
			break
		}
		for i, a := range n.Args {
			if t.holds(p, a) {
				changed = t.mark(param(fn, i)) || changed
			}
		}
	}
	return changed
}

// keys marks the parameters that call uses as a key: the first argument
// of a keyed method of the ordered object, or an argument passed to a
// parameter already so marked.
func (t *tracker) keys(p *pkg, call *ast.CallExpr) bool {
	mark := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return false
		}
		v, ok := p.Info.Uses[id].(*types.Var)
		if !ok || v.IsField() || t.keyed[v] {
			return false
		}
		t.keyed[v] = true
		return true
	}
	if name, _ := t.objectMethod(p, call); name != "" {
		if _, ok := keyMethods[name]; ok && len(call.Args) > 0 {
			return mark(call.Args[0])
		}
		return false
	}
	fn := callee(p, call)
	if fn == nil {
		return false
	}
	changed := false
	for i, a := range call.Args {
		if t.keyed[param(fn, i)] {
			changed = mark(a) || changed
		}
	}
	return changed
}

// accesses returns every constant-key access to metadata.taskd in the
// packages for which keep is true.
func (t *tracker) accesses(keep func(*pkg) bool) []keyAccess {
	// Which variables holding metadata.taskd have a writing method called
	// on them: a helper handed one of them writes.
	for _, p := range t.m.Pkgs {
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if name, sel := t.objectMethod(p, call); keyMethods[name] {
					if id, ok := ast.Unparen(sel.X).(*ast.Ident); ok {
						if v, ok := p.Info.Uses[id].(*types.Var); ok && t.vars[v] {
							t.written[v] = true
						}
					}
				}
				return true
			})
		}
	}
	var out []keyAccess
	for _, p := range t.m.Pkgs {
		if !keep(p) {
			continue
		}
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if a, ok := t.access(p, call); ok {
						out = append(out, a)
					}
				}
				return true
			})
		}
	}
	return out
}

// access reports whether call names a key of metadata.taskd by a constant.
func (t *tracker) access(p *pkg, call *ast.CallExpr) (keyAccess, bool) {
	a := keyAccess{Pos: t.m.pos(call.Pos()), Pkg: p.Rel}
	if name, sel := t.objectMethod(p, call); name != "" {
		write, keyed := keyMethods[name]
		if !keyed || len(call.Args) == 0 || !t.holds(p, sel.X) {
			return a, false
		}
		k, ok := constString(p, call.Args[0])
		a.Call, a.Key, a.Write = name, k, write
		return a, ok
	}
	fn := callee(p, call)
	if fn == nil {
		return a, false
	}
	held, key := -1, ""
	for i, arg := range call.Args {
		if held < 0 && t.holds(p, arg) {
			held = i
		} else if k, ok := constString(p, arg); ok && key == "" && t.keyed[param(fn, i)] {
			key = k
		}
	}
	if held < 0 || key == "" {
		return a, false
	}
	a.Call, a.Key, a.Helper = fn.Name(), key, true
	a.Write = t.written[param(fn, held)]
	return a, true
}

// roots returns the positions of Object("taskd"), EnsureObject("taskd") and
// Get("taskd") calls in the packages for which keep is true.
func (t *tracker) roots(keep func(*pkg) bool) []string {
	var out []string
	for _, p := range t.m.Pkgs {
		if !keep(p) {
			continue
		}
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok && t.isRoot(p, call) {
					out = append(out, t.m.pos(call.Pos()))
				}
				return true
			})
		}
	}
	slices.Sort(out)
	return out
}
