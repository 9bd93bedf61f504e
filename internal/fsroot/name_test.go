package fsroot_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/internal/fsroot"
)

func TestCheckName(t *testing.T) {
	tests := []struct {
		name string
		want error // nil: accepted
	}{
		{"7", nil},
		{"a b.json", nil},
		{"täsk", nil},
		{strings.Repeat("x", 255), nil},
		{"", fsroot.ErrBadName},
		{".", fsroot.ErrBadName},
		{"..", fsroot.ErrBadName},
		{"../x", fsroot.ErrBadName},
		{"a/b", fsroot.ErrBadName},
		{"/etc", fsroot.ErrBadName},
		{"a\x00b", fsroot.ErrBadName},
		{strings.Repeat("x", 256), fsroot.ErrBadName},
	}
	for _, tt := range tests {
		if got := fsroot.CheckName(tt.name); !errors.Is(got, tt.want) || (tt.want == nil) != (got == nil) {
			t.Errorf("CheckName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestJoin(t *testing.T) {
	base := t.TempDir()
	got, err := fsroot.Join(base, ".taskd", "inbox", "7")
	if want := filepath.Join(base, ".taskd", "inbox", "7"); err != nil || got != want {
		t.Errorf("Join = %q, %v, want %q", got, err, want)
	}
	for _, bad := range [][]string{{"..", "x"}, {"inbox", "../../../etc"}, {"a/../../b"}, {""}} {
		if p, err := fsroot.Join(base, bad...); !errors.Is(err, fsroot.ErrBadName) {
			t.Errorf("Join(%q) = %q, %v, want ErrBadName", bad, p, err)
		}
	}
}

// Paths given whole must stay inside their base, however they are spelt.
func TestEscapesRefused(t *testing.T) {
	base := filepath.Join(t.TempDir(), "list")
	outside := filepath.Dir(base)
	for _, p := range []string{
		"../x",
		filepath.Join(base, "..", "x"),
		filepath.Join(base, ".taskd", "inbox", "..", "..", "..", "x"),
		"/etc/passwd",
		outside,
		base,
		".taskd/../../x",
	} {
		if err := fsroot.MkdirAll(base, p); err == nil {
			t.Errorf("MkdirAll(%q) succeeded, want a refusal", p)
		} else if !errors.Is(err, fsroot.ErrEscape) && !errors.Is(err, fsroot.ErrBadName) {
			t.Errorf("MkdirAll(%q) = %v, want ErrEscape or ErrBadName", p, err)
		}
	}
	if entries, _ := filepath.Glob(filepath.Join(outside, "*")); len(entries) != 0 {
		t.Errorf("made %v outside the base", entries)
	}
}
