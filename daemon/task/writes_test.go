package task_test

import (
	"go/ast"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateWritesOnlyHere: a task's state and status change only through
// this package (Apply, End, Move, Unclaim, Begin). The test reads every Go file
// of the module outside daemon/task and taskfile (which fills a new file's
// defaults) and fails on a raw write of metadata.taskd.state — a Set or
// Delete of "state" — or of a task file's Status.
func TestStateWritesOnlyHere(t *testing.T) {
	m := parseModule(t, filepath.Join("..", ".."))
	fset := m.fset
	for _, f := range m.files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "Set" && sel.Sel.Name != "Delete") || len(n.Args) == 0 {
					return true
				}
				if lit, ok := n.Args[0].(*ast.BasicLit); ok && lit.Value == `"state"` {
					t.Errorf("%s: raw %s of \"state\"; use task.Move", fset.Position(n.Pos()), sel.Sel.Name)
				}
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Status" && i < len(n.Rhs) && isStatus(n.Rhs[i]) {
						t.Errorf("%s: raw write of a task's Status; use task.Move", fset.Position(n.Pos()))
					}
				}
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Status" && isStatus(n.Value) {
					t.Errorf("%s: a task made with a Status; use task.Begin", fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
}

// isStatus reports whether e is one of taskfile's Status constants.
func isStatus(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "taskfile" && strings.HasPrefix(sel.Sel.Name, "Status")
}
