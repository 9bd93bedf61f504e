package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTail_ControlCharacters: what a task file put in an event (its
// subject, a workflow's step, a reason) reaches the terminal through
// taskd tail without its control characters: a value that holds one is
// quoted with them made spaces, never printed as it is.
func TestTail_ControlCharacters(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tasks")
	area := filepath.Join(root, "l", ".taskd")
	if err := os.MkdirAll(area, 0o700); err != nil {
		t.Fatal(err)
	}
	events := `{"ts":"2026-01-02T03:04:05Z","type":"TaskAccepted","list":"l","task":"1","subject":"E\u001b]0;PWNED\u0007\u001b[31mRED"}
{"ts":"2026-01-02T03:04:06Z","type":"StepStarted","list":"l","task":"1","step":"s\u001b[2Jx","reason":"a\u009bb"}
`
	if err := os.WriteFile(filepath.Join(area, "events.jsonl"), []byte(events), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "tail", "--root", root)
	if code != 0 || strings.Count(out, "\n") != 2 {
		t.Fatalf("tail: exit %d, stdout:\n%q\nstderr: %s", code, out, errOut)
	}
	for _, r := range out {
		if r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0) {
			t.Fatalf("tail prints the control character %U:\n%q", r, out)
		}
	}
	if !strings.Contains(out, `subject="E ]0;PWNED  [31mRED"`) || !strings.Contains(out, `reason="a b"`) {
		t.Errorf("the subject or the reason is not quoted, cleaned:\n%s", out)
	}
}
