package fsroot_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// opening are the calls that open a file or a directory by path, and so
// could wait on a FIFO or a device.
var opening = map[string][]string{
	"os":      {"Open", "OpenFile", "ReadFile", "ReadDir", "Create", "WriteFile", "DirFS"},
	"ioutil":  {"ReadFile", "ReadDir", "WriteFile", "TempFile"},
	"flock":   {"New"},
	"syscall": {"Open", "Openat"},
	"unix":    {"Open", "Openat", "Openat2"},
}

// openers are the files that may make such a call, and why.
var openers = map[string]string{
	"internal/fsroot":          "the one way of opening files: O_NONBLOCK, then fstat",
	"internal/proc":            "kernel files only: /proc and the cgroup file system",
	"internal/natstest":        "a test server's certificates, in a test's directory",
	"daemon/job/jobtest":       "a test harness's own files, in a test's directory",
	"internal/disktest":        "a filler file on a test's own small disk",
	"taskfile/dir.go":          "openTask: O_NONBLOCK, then fstat, with a task file's own errors",
	"taskfile/spares.go":       "O_DIRECTORY, which never waits",
	"taskfile/write.go":        "a new temporary file: O_CREAT|O_EXCL, which never opens what is there",
	"daemon/agent/runfiles.go": "the null device, on purpose",
	// The system's user database (/etc/passwd, login.defs, /Users), which
	// only root can replace: package readable is below fsroot.
	"internal/readable/homes.go":        "the system's user database",
	"internal/readable/homes_darwin.go": "the system's user database",
}

// TestOpensGoThroughFsroot: no file of the module but those of openers
// opens a file by path itself (os.Open, os.ReadFile, os.ReadDir, a flock,
// …): every open goes through package fsroot, which never waits on a file
// and refuses what is not a regular file (or a directory). Reads of /proc
// are allowed anywhere.
func TestOpensGoThroughFsroot(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if _, ok := openers[rel]; ok || rel == "testdata" || rel == ".git" || rel == "bench" || strings.HasSuffix(rel, "/testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if _, ok := openers[rel]; ok || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(src, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok || !slices.Contains(opening[pkg.Name], sel.Sel.Name) {
				return true
			}
			if len(call.Args) > 0 && readsProc(call.Args[0]) {
				return true
			}
			t.Errorf("%s: %s.%s opens a file itself; use package fsroot (OpenRegular, ReadRegular, ReadDirectory, OpenFD, …), which never waits on one", fset.Position(call.Pos()), pkg.Name, sel.Sel.Name)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readsProc reports whether a path argument names a file under /proc.
func readsProc(arg ast.Expr) bool {
	found := false
	ast.Inspect(arg, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && strings.HasPrefix(strings.Trim(lit.Value, "\"`"), "/proc") {
			found = true
		}
		return !found
	})
	return found
}
