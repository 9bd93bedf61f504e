package parallel_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/taskd/taskd/daemon/parallel"
)

// TestRead_Hostile: a parallel file that is a FIFO, a link, not JSON, or
// sets numbers out of range is an error, read without blocking or
// following; an absent one is empty.
func TestRead_Hostile(t *testing.T) {
	root := t.TempDir()
	if r, err := parallel.Read(root); err != nil || !r.Empty() {
		t.Fatalf("no file: %+v, %v", r, err)
	}
	path := filepath.Join(root, parallel.Name)
	secret := filepath.Join(t.TempDir(), "secret.json")
	os.WriteFile(secret, []byte(`{"all": 7}`), 0o600)
	for _, tt := range []struct {
		name string
		make func() error
		want string
	}{
		{"fifo", func() error { return syscall.Mkfifo(path, 0o600) }, "not a regular file"},
		{"link", func() error { return os.Symlink(secret, path) }, ""},
		{"not json", func() error { return os.WriteFile(path, []byte("{"), 0o600) }, "unexpected end"},
		{"too many", func() error { return os.WriteFile(path, []byte(`{"lists": {"l": 100000}}`), 0o600) }, "lists.l is 100000"},
		{"negative", func() error { return os.WriteFile(path, []byte(`{"all": -1}`), 0o600) }, "all is -1"},
	} {
		os.Remove(path)
		if err := tt.make(); err != nil {
			t.Fatal(err)
		}
		r, err := parallel.Read(root)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !r.Empty() {
			t.Errorf("%s: %+v, %v; want an error saying %q", tt.name, r, err, tt.want)
		}
	}
	os.Remove(path)
	os.Symlink(secret, path)
	if err := parallel.Update(context.Background(), root, func(r *parallel.Record) error { r.All = 2; return nil }); err == nil {
		t.Error("Update wrote through a link")
	}
	if data, _ := os.ReadFile(secret); string(data) != `{"all": 7}` {
		t.Errorf("the link's target was changed: %s", data)
	}
}
