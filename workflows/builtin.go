package workflows

import (
	"embed"
	"path"
	"sort"
	"strings"
	"sync"
)

// The built-in workflows are taskd's own, written in flow's format. Their
// ids reuse flow's names where the purpose is the same (so flow's subject
// emoji applies), but the graphs are taskd's: every gate's retry loop
// returns to the gate through unconditional edges, so that flow's single
// retry counter can run out and escalate.
//
//go:embed builtin/*.json
var builtinFS embed.FS

var (
	builtinOnce sync.Once
	builtinDefs []*Definition
)

// builtins returns the parsed built-in definitions, parsed once.
func builtins() []*Definition {
	builtinOnce.Do(func() {
		entries, err := builtinFS.ReadDir("builtin")
		if err != nil {
			panic("workflows: embedded directory missing: " + err.Error()) // a build error
		}
		for _, e := range entries {
			file := path.Join("builtin", e.Name())
			data, err := builtinFS.ReadFile(file)
			if err != nil {
				panic("workflows: embedded file unreadable: " + err.Error())
			}
			builtinDefs = append(builtinDefs, define(strings.TrimSuffix(e.Name(), ".json"), data, file, "", true))
		}
		sort.Slice(builtinDefs, func(i, j int) bool { return builtinDefs[i].ID < builtinDefs[j].ID })
	})
	return builtinDefs
}

// builtin parses the built-in definition of id alone, or returns nil.
func builtin(id string) *Definition {
	file := path.Join("builtin", id+".json")
	data, err := builtinFS.ReadFile(file)
	if err != nil {
		return nil
	}
	return define(id, data, file, "", true)
}

// Builtin returns the definitions embedded in taskd, by id order.
func Builtin() []*Definition {
	return append([]*Definition(nil), builtins()...)
}
