package agent

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/config"
)

// notKinds are the literals that read as a kind's name but are not about
// kinds, by file.
var notKinds = map[string]string{
	"cmd/taskd/claude.go":        "claude", // the command taskd claude, which installs a skill into Claude Code
	"cmd/taskd/mcp.go":           "claude", // Claude Code's own CLI, which taskd mcp install asks to add the server
	"daemon/subagent/handoff.go": "none",   // a handoff's action
	"navigator/response.go":      "none",   // a workflow step's answer
}

// TestKindsNamedOnlyByThemselves: no file of the module names an agent
// kind — its name, a program or an output format of its own, a built-in
// profile — in a string literal, except the kind's own files here
// (claude.go, claudestream.go, …: the kind's name, a program or a
// profile's name begins the file's) and the configuration's table
// (daemon/config/kinds.go). Everything else asks the kind (Kind, KindOf,
// IsModel, CanResume), so that a new kind is one new file.
func TestKindsNamedOnlyByThemselves(t *testing.T) {
	words := map[string]string{} // a word → its kind
	owners := map[string][]string{}
	for _, k := range config.Kinds() {
		names := append([]string{k.Name}, k.Programs...)
		names = append(names, slices.Collect(maps.Keys(k.Profiles))...)
		owners[k.Name] = names
		for _, w := range append(names, k.Outputs...) {
			words[w] = k.Name
		}
	}
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch rel {
			case "bench", ".git", "testdata", // bench/house counts kinds by their names
				"internal/claudestub": // the Messages API for tests of the real claude
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || rel == "daemon/config/kinds.go" {
			return nil
		}
		src, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(src, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			kind, named := words[s]
			if err != nil || !named || notKinds[rel] == s {
				return true
			}
			if ownFile(rel, owners) {
				return true // a kind's own file (codex's names its command codex exec)
			}
			t.Errorf("%s: %q names kind %q outside its own files: ask the kind (agent.Kind, agent.KindOf) instead", fset.Position(lit.Pos()), s, kind)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 || len(words) < 9 {
		t.Fatalf("checked %d files for %d words: the module was not found", checked, len(words))
	}
}

// ownFile reports whether the file rel is a kind's own: in this package,
// its name begins with one of the kind's names.
func ownFile(rel string, owners map[string][]string) bool {
	if filepath.Dir(rel) != "daemon/agent" {
		return false
	}
	for _, names := range owners {
		if slices.ContainsFunc(names, func(name string) bool { return strings.HasPrefix(filepath.Base(rel), name) }) {
			return true
		}
	}
	return false
}
