package proc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestStartsGoThroughProc: no file of the module outside this package
// starts a process itself: in a file that imports os/exec, no
// Start, Run, Output or CombinedOutput without arguments (an *exec.Cmd's),
// and nowhere os.StartProcess or syscall.ForkExec. A process started
// elsewhere would not be registered, and the daemon's reaper of orphans
// could take its exit status.
func TestStartsGoThroughProc(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch rel {
			case "internal/proc", "bench", ".git", "testdata",
				"internal/natstest": // test servers, imported by tests only
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		usesExec := slices.ContainsFunc(src.Imports, func(i *ast.ImportSpec) bool {
			p, _ := strconv.Unquote(i.Path.Value)
			return p == "os/exec"
		})
		ast.Inspect(src, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			name := sel.Sel.Name
			if x, ok := sel.X.(*ast.Ident); ok && (x.Name == "os" && name == "StartProcess" || x.Name == "syscall" && name == "ForkExec") {
				t.Errorf("%s: %s.%s starts a process itself; use package proc", fset.Position(call.Pos()), x.Name, name)
			}
			if usesExec && len(call.Args) == 0 && slices.Contains([]string{"Start", "Run", "Output", "CombinedOutput"}, name) {
				t.Errorf("%s: .%s() starts a process itself; use proc.Start, proc.Run or proc.StartLocked", fset.Position(call.Pos()), name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
