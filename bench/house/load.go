package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A module is a Go module's packages, parsed and type-checked from source.
type module struct {
	Path string // the module path, from go.mod
	Dir  string // its root directory
	Fset *token.FileSet
	Pkgs []*pkg // in dependency order: a package after the ones it imports
}

// A pkg is one package of the module, with its non-test files parsed and
// checked, and what go list says of its tests.
type pkg struct {
	Path      string // import path
	Rel       string // the path inside the module: "daemon/task", "." for the root
	Dir       string
	Name      string
	Files     []*ast.File // the non-test files, the ones the counts read
	Types     *types.Package
	Info      *types.Info
	TestFiles int // _test.go files, in-package and external
	Imports   []string
}

// listed is the part of `go list -json` the loader reads.
type listed struct {
	ImportPath   string
	Name         string
	Dir          string
	Export       string
	GoFiles      []string
	CgoFiles     []string
	TestGoFiles  []string
	XTestGoFiles []string
	Imports      []string
	ImportMap    map[string]string
	Module       *struct {
		Path string
		Main bool
	}
	Error *struct{ Err string }
}

// load lists the module at dir with the go command (building the export
// data of its dependencies), parses its packages and type-checks them from
// source, dependencies outside the module from their export data.
func load(dir string) (*module, error) {
	cmd := exec.Command("go", "list", "-e", "-export", "-deps", "-json", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %v: %s", dir, err, bytes.TrimSpace(stderr.Bytes()))
	}
	var all []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		all = append(all, l)
	}
	m := &module{Dir: dir, Fset: token.NewFileSet()}
	export := map[string]string{}
	for _, l := range all {
		if l.Error != nil && l.Module != nil && l.Module.Main {
			return nil, fmt.Errorf("package %s: %s", l.ImportPath, l.Error.Err)
		}
		if l.Module != nil && l.Module.Main {
			m.Path = l.Module.Path
		} else {
			export[l.ImportPath] = l.Export
		}
	}
	if m.Path == "" {
		return nil, fmt.Errorf("no package of the main module in %s", dir)
	}
	gc := importer.ForCompiler(m.Fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := export[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	checked := map[string]*types.Package{}
	for _, l := range all {
		if l.Module == nil || !l.Module.Main {
			continue
		}
		p, err := m.check(l, checked, gc)
		if err != nil {
			return nil, err
		}
		checked[p.Path] = p.Types
		m.Pkgs = append(m.Pkgs, p)
	}
	return m, nil
}

// check parses and type-checks one package of the module.
func (m *module) check(l listed, checked map[string]*types.Package, gc types.Importer) (*pkg, error) {
	p := &pkg{
		Path: l.ImportPath, Dir: l.Dir, Name: l.Name,
		TestFiles: len(l.TestGoFiles) + len(l.XTestGoFiles),
		Imports:   l.Imports,
		Rel:       strings.TrimPrefix(strings.TrimPrefix(l.ImportPath, m.Path), "/"),
	}
	if p.Rel == "" {
		p.Rel = "."
	}
	for _, name := range append(append([]string(nil), l.GoFiles...), l.CgoFiles...) {
		f, err := parser.ParseFile(m.Fset, filepath.Join(l.Dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		p.Files = append(p.Files, f)
	}
	p.Info = &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	conf := types.Config{Importer: importerFunc(func(path string) (*types.Package, error) {
		if mapped, ok := l.ImportMap[path]; ok {
			path = mapped
		}
		if t, ok := checked[path]; ok {
			return t, nil
		}
		return gc.Import(path)
	})}
	t, err := conf.Check(p.Path, m.Fset, p.Files, p.Info)
	if err != nil {
		return nil, fmt.Errorf("type-check %s: %w", p.Path, err)
	}
	p.Types = t
	return p, nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// pkgAt returns the module's package at rel ("daemon/task"), or nil.
func (m *module) pkgAt(rel string) *pkg {
	for _, p := range m.Pkgs {
		if p.Rel == rel {
			return p
		}
	}
	return nil
}

// rel returns a position's file relative to the module root, with its line.
func (m *module) pos(at token.Pos) string {
	p := m.Fset.Position(at)
	if r, err := filepath.Rel(m.Dir, p.Filename); err == nil {
		p.Filename = filepath.ToSlash(r)
	}
	return fmt.Sprintf("%s:%d", p.Filename, p.Line)
}

// file returns the file of a position, relative to the module root.
func (m *module) file(at token.Pos) string {
	name := m.Fset.Position(at).Filename
	if r, err := filepath.Rel(m.Dir, name); err == nil {
		return filepath.ToSlash(r)
	}
	return name
}
