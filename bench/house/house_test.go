package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/mini.md")

// loadMini loads the small module of testdata/mini, whose lines say with
// "// want …" comments what the tool must count on them.
func loadMini(t *testing.T) (*module, *Figures) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "mini"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m, measure(m)
}

// TestSites: every site the tool counts in testdata/mini is a "// want"
// of its line, and every want is counted: metadata.taskd's roots and
// constant-key accesses (through variables, fields, parameters, returned
// values, type assertions and helpers that take a key), agent kinds told
// apart by string, wide and long functions.
func TestSites(t *testing.T) {
	_, f := loadMini(t)
	var got []string
	for _, a := range f.KeyAccesses {
		s := a.Pos + " key " + a.Key
		if a.Write {
			s += " write"
		}
		if a.Helper {
			s += " helper"
		}
		got = append(got, s)
	}
	for _, s := range f.TaskdRoots {
		got = append(got, s+" root")
	}
	add := func(what string, sites []string) {
		for _, s := range sites {
			pos, _, _ := strings.Cut(s, " ")
			got = append(got, pos+" "+what)
		}
	}
	add("kind", f.KindSwitches)
	add("wide", f.WideFuncs)
	add("long", f.LongFuncs)
	slices.Sort(got)
	want := wants(t, filepath.Join("testdata", "mini"))
	if !slices.Equal(got, want) {
		t.Errorf("sites:\ngot  %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// wants reads the "// want a; b" comments of the module at dir.
func wants(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		sc := bufio.NewScanner(bytes.NewReader(data))
		for n := 1; sc.Scan(); n++ {
			_, w, ok := strings.Cut(sc.Text(), "// want ")
			if !ok {
				continue
			}
			for item := range strings.SplitSeq(w, ";") {
				out = append(out, fmt.Sprintf("%s:%d %s", filepath.ToSlash(rel), n, strings.TrimSpace(item)))
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestCounts: the figures that are not sites.
func TestCounts(t *testing.T) {
	_, f := loadMini(t)
	untested := slices.Sorted(slices.Values(f.Untested))
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"packages", f.Packages, 7},
		{"functions", f.Funcs, 28},
		{"accesses inside daemon/task", f.KeysInTask, 1},
		{"distinct keys", fmt.Sprint(f.Keys()), "[agent attempt cwd error hold note pid prompt result retryAt startedAt state tools]"},
		{"Daemon's methods", fmt.Sprint(f.DaemonMethods), "[Run observe]"},
		{"Job's methods", fmt.Sprint(f.JobMethods), "[Start Stop resume]"},
		{"files of Job's methods", f.JobMethodFile, 2},
		{"untested", fmt.Sprint(untested), "[daemon daemon/config daemon/flow daemon/job internal/jsonorder taskfile]"},
		{"exported of daemon/task", f.Exported["daemon/task"], 5},
		{"exported of internal/jsonorder", f.Exported["internal/jsonorder"], 10},
		{"exported of taskfile", f.Exported["taskfile"], 3},
		{"exported of daemon/config", f.Exported["daemon/config"], 4},
		{"largest package", f.LargestPkg, "daemon/flow"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestTable: the Markdown the tool prints for testdata/mini
// (testdata/mini.md; -update rewrites it).
func TestTable(t *testing.T) {
	_, f := loadMini(t)
	var buf bytes.Buffer
	writeTable(&buf, f, "")
	writeSites(&buf, f)
	golden := filepath.Join("testdata", "mini.md")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != string(want) {
		t.Errorf("table differs from %s (rerun with -update if the change is meant):\n%s", golden, got)
	}
}
