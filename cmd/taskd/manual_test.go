package main

import (
	"flag"
	"os"
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
