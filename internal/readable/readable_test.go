package readable_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/internal/readable"
)

func TestRule_Check(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home", "me")
	project := filepath.Join(home, "project")
	os.MkdirAll(project, 0o700)
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("key"), 0o600)
	os.Symlink("/etc", filepath.Join(project, "etc-link"))
	os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(project, "keys"))
	tests := []struct {
		name  string
		roots []string
		path  string
		want  error // nil: allowed
	}{
		{"project file", []string{project}, filepath.Join(project, "main.go"), nil},
		{"home is a root", []string{home}, filepath.Join(home, "notes.md"), nil},
		{"environ", []string{"/"}, "/proc/self/environ", readable.ErrDenied},
		{"environ from a root of /proc", []string{"/proc"}, "/proc/self/environ", readable.ErrDenied},
		{"sys", []string{project}, "/sys/kernel/notes", readable.ErrDenied},
		{"dev", []string{project}, "/dev/zero", readable.ErrDenied},
		{"ssh key", []string{home}, filepath.Join(home, ".ssh", "id_rsa"), readable.ErrDenied},
		{"ssh key through a link", []string{project}, filepath.Join(project, "keys", "id_rsa"), readable.ErrDenied},
		{"aws", []string{home}, filepath.Join(home, ".aws", "credentials"), readable.ErrDenied},
		{"gnupg", []string{home}, filepath.Join(home, ".gnupg", "secring.gpg"), readable.ErrDenied},
		{"netrc", []string{home}, filepath.Join(home, ".netrc"), readable.ErrDenied},
		{"gcloud", []string{home}, filepath.Join(home, ".config", "gcloud", "credentials.db"), readable.ErrDenied},
		{"claude credentials", []string{home}, filepath.Join(home, ".claude", ".credentials.json"), readable.ErrDenied},
		{"another user's home", []string{filepath.Join(base, "home", "you")}, filepath.Join(base, "home", "you", "x"), readable.ErrDenied},
		{"root's home", []string{"/root"}, "/root/.bashrc", readable.ErrDenied},
		{"a sibling of home is no one's", []string{filepath.Join(base, "home", "project")}, filepath.Join(base, "home", "project", "x"), nil},
		{"a sibling of home outside the roots", []string{project}, filepath.Join(base, "home", "project", "x"), readable.ErrOutside},
		{"cwd / reads nothing", []string{"/"}, "/etc/passwd", readable.ErrOutside},
		{"an ancestor of home is no root", []string{base}, filepath.Join(base, "x"), readable.ErrOutside},
		{"the parent of home is no root", []string{filepath.Join(base, "home")}, filepath.Join(base, "home", "x"), readable.ErrOutside},
		{"link out of the root", []string{project}, filepath.Join(project, "etc-link", "passwd"), readable.ErrOutside},
		{"dot-dot out of the root", []string{project}, filepath.Clean(filepath.Join(project, "..", "..", "..", "x")), readable.ErrOutside},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := readable.Rule{Home: home, Roots: tt.roots, Others: []string{filepath.Join(base, "home", "you"), "/root"}}
			real := tt.path
			if p, err := filepath.EvalSymlinks(tt.path); err == nil {
				real = p
			} else if d, err := filepath.EvalSymlinks(filepath.Dir(tt.path)); err == nil {
				real = filepath.Join(d, filepath.Base(tt.path))
			}
			err := r.Check(tt.path, real)
			if (tt.want == nil) != (err == nil) || !errors.Is(err, tt.want) {
				t.Errorf("Check(%s) = %v, want %v", tt.path, err, tt.want)
			}
		})
	}
}

func TestRule_IsRoot(t *testing.T) {
	r := readable.Rule{Home: "/home/me"}
	for _, tt := range []struct {
		dir  string
		want bool
	}{{"/", false}, {"/home", false}, {"/home/me", true}, {"/home/me/src", true}, {"/srv/project", true}} {
		if got := r.IsRoot(tt.dir); got != tt.want {
			t.Errorf("IsRoot(%s) = %v, want %v", tt.dir, got, tt.want)
		}
	}
}

// TestRule_Allowed: the configuration's allowedRoots are roots of their
// own; one inside another user's home opens that directory and nothing
// else of it, and never its credential stores.
func TestRule_Allowed(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "me")
	you := filepath.Join(base, "you")
	shared := filepath.Join(you, "shared")
	data := filepath.Join(base, "srv", "data")
	for _, d := range []string{home, shared, data} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	r := readable.Rule{Home: home, Roots: []string{filepath.Join(home, "project")}, Allowed: []string{shared, data, you + "/.ssh/.."}, Others: []string{you}}
	for _, tt := range []struct {
		path string
		want error
	}{
		{filepath.Join(data, "table.csv"), nil},
		{filepath.Join(shared, "notes.md"), nil},
		{filepath.Join(you, "diary.md"), nil}, // allowedRoots names all of it (you/.ssh/..)
		{filepath.Join(you, ".ssh", "id_ed25519"), readable.ErrDenied},
		{filepath.Join(base, "srv", "other"), readable.ErrOutside},
	} {
		if err := r.Check(tt.path, tt.path); (tt.want == nil) != (err == nil) || !errors.Is(err, tt.want) {
			t.Errorf("Check(%s) = %v, want %v", tt.path, err, tt.want)
		}
	}
	r.Allowed = []string{shared}
	if err := r.Check(filepath.Join(you, "diary.md"), filepath.Join(you, "diary.md")); !errors.Is(err, readable.ErrDenied) {
		t.Errorf("another user's file beside the directory they share: %v, want denied", err)
	}
}
