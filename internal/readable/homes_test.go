package readable

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestOtherHomes: other users' homes come from the user database: root's
// and those of people's ids (login.defs's range), not the current user's,
// not service accounts', never "/" or a directory that holds the home.
func TestOtherHomes(t *testing.T) {
	dir := t.TempDir()
	passwd := filepath.Join(dir, "passwd")
	defs := filepath.Join(dir, "login.defs")
	if err := os.WriteFile(passwd, []byte(`root:x:0:0:root:/root:/bin/bash
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin
systemd-network:x:998:998:systemd Network Management:/:/usr/sbin/nologin
# a comment
me:x:1000:1000:Me:/tmp/homeAB12:/bin/bash
you:x:1001:1001:You,,,:/home/you:/bin/bash
odd:x:1002:1002::/tmp:/bin/sh
ci:x:2500:2500::/srv/ci:/bin/sh
big:x:70000:70000::/home/big:/bin/sh
broken line
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(defs, []byte("# login.defs\nUID_MIN\t\t 1000\nUID_MAX\t\t 60000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		self int
		home string
		want []string
	}{
		{1000, "/tmp/homeAB12", []string{"/root", "/home/you", "/srv/ci"}},
		{0, "/root", []string{"/tmp/homeAB12", "/home/you", "/tmp", "/srv/ci"}},
		{1001, "/home/you", []string{"/root", "/tmp/homeAB12", "/tmp", "/srv/ci"}},
	}
	for _, tt := range tests {
		if got := otherHomes(passwd, defs, tt.self, tt.home); !slices.Equal(got, tt.want) {
			t.Errorf("otherHomes as %d (home %s) = %q, want %q", tt.self, tt.home, got, tt.want)
		}
	}
	if err := os.WriteFile(defs, []byte("UID_MIN 2000\nUID_MAX 3000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := otherHomes(passwd, defs, 1000, "/tmp/homeAB12"), []string{"/root", "/srv/ci"}; !slices.Equal(got, want) {
		t.Errorf("with UID_MIN 2000: %q, want %q", got, want)
	}
	if got, want := otherHomes(filepath.Join(dir, "missing"), defs, 1000, "/tmp/homeAB12"), []string{"/root"}; !slices.Equal(got, want) {
		t.Errorf("without a user database: %q, want %q", got, want)
	}
}
