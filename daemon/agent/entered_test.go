package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/internal/proc"
)

// TestEntered: a restart tells an attempt that went on to start its agent
// from one that only waited for its slot by what it left: its cgroup (made
// just before the agent starts), or, with none, cmd.json's entered; the
// cmd.json written while it waited says neither.
func TestEntered(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  string // cmd.json, "" for none
		want bool
	}{
		{"nothing", "", false},
		{"prepared", `{"argv": ["sh", "-c", "true"], "attempt": 1}`, false},
		{"entered without a cgroup", `{"argv": ["sh", "-c", "true"], "attempt": 1, "entered": true}`, true},
		{"not json", `{"entered": tr`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list := t.TempDir()
			dir := filepath.Join(list, ".taskd", "runs", "1", "1")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if tc.cmd != "" {
				if err := os.WriteFile(filepath.Join(dir, "cmd.json"), []byte(tc.cmd), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := Entered(dir); got != tc.want {
				t.Errorf("Entered = %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("cgroup", func(t *testing.T) {
		s := proc.Supervise()
		if s.Mode() != proc.ByCgroup {
			t.Skip("attempts get no cgroups here")
		}
		dir := filepath.Join(t.TempDir(), ".taskd", "runs", "1", "1")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if Entered(dir) {
			t.Fatal("Entered before the attempt's cgroup was made")
		}
		g := s.Group(marker(dir))
		if g.Cgroup() == "" {
			t.Skipf("no cgroup made: %v", g.Degraded())
		}
		if !Entered(dir) {
			t.Error("Entered = false with the attempt's cgroup there")
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if Entered(dir) {
			t.Error("Entered = true once the cgroup was removed")
		}
	})
}
