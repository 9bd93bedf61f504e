package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCommandsDoc_NamesEveryCommand: docs/commands.md, the table of the
// commands `taskd help` lists, names each of them (an alias aside): as
// "taskd NAME", or among a row's names ("`taskd install`, `uninstall`",
// "`taskd child push|start|…`").
func TestCommandsDoc_NamesEveryCommand(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "commands.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, c := range commands {
		if c.replacedBy != "" {
			continue
		}
		words := strings.Fields(c.name)
		named := strings.Contains(doc, "`taskd "+c.name)
		if !named && len(words) == 1 {
			named = regexp.MustCompile("`" + regexp.QuoteMeta(c.name) + "`").MatchString(doc)
		}
		if !named && len(words) == 2 {
			named = regexp.MustCompile(`taskd ` + words[0] + ` [a-z|\\]*\b` + regexp.QuoteMeta(words[1]) + `\b`).MatchString(doc)
		}
		if !named {
			t.Errorf("docs/commands.md does not name taskd %s (%s)", c.name, c.short)
		}
	}
}
