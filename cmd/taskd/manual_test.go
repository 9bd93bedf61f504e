package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files and doc.go")

// TestDocGo keeps doc.go, the manual `go doc` shows, identical to what
// `taskd help CMD` prints. Run with -update after changing a command's help.
func TestDocGo(t *testing.T) {
	want := docComment()
	if *update {
		if err := os.WriteFile("doc.go", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("doc.go is out of date with the command table; run: go test ./cmd/taskd -run TestDocGo -update")
	}
}

// Ensure 'taskd help CMD' prints, for every command, the manual section
// that doc.go holds, and that every manual says what the command does when
// it fails.
func TestHelp(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range table() {
		out, errOut, code := runCLI(t, "help", c.name)
		if code != 0 {
			t.Errorf("help %s: exit %d: %s", c.name, code, errOut)
			continue
		}
		if !strings.Contains(out, manual(c)) {
			t.Errorf("help %s does not print the manual of the %s command %q:\n%s", c.name, c.group, c.name, out)
		}
		section := "// # taskd " + c.name + "\n//\n//\ttaskd " + strings.TrimSpace(c.name+" "+c.usage) + "\n"
		if !strings.Contains(string(doc), section) {
			t.Errorf("doc.go lacks the section of %s", c.name)
		}
		long := strings.ToLower(c.long)
		if !strings.Contains(long, "fail") && !strings.Contains(long, "status") && !strings.Contains(long, "error") {
			t.Errorf("the manual of %s does not say how it fails (its errors or exit status)", c.name)
		}
	}
	if _, errOut, code := runCLI(t, "help", "frobnicate"); code != 1 || !strings.Contains(errOut, `no command "frobnicate"`) {
		t.Errorf("help frobnicate: exit %d, %s", code, errOut)
	}
}
