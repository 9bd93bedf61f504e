package daemon_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/daemon"
)

// TestConfig_Scheduling: the scheduling policy is batch unless the
// configuration says normal; anything else is refused with the choices.
func TestConfig_Scheduling(t *testing.T) {
	for _, tt := range []struct{ config, want, wantErr string }{
		{`{}`, "batch", ""},
		{`{"scheduling": "batch"}`, "batch", ""},
		{`{"scheduling": "normal"}`, "normal", ""},
		{`{"scheduling": "idle"}`, "", `config ` + "%s" + `: scheduling "idle" is neither "batch" nor "normal"`},
	} {
		path := filepath.Join(t.TempDir(), "config.json")
		if err := os.WriteFile(path, []byte(tt.config), 0o644); err != nil {
			t.Fatal(err)
		}
		fc, err := daemon.LoadFileConfig(path, false)
		if tt.wantErr != "" {
			if want := fmt.Sprintf(tt.wantErr, path); err == nil || err.Error() != want {
				t.Errorf("%s: error %v, want %q", tt.config, err, want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.config, err)
		}
		cfg, err := daemon.NewConfig(t.TempDir(), nil, fc)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Scheduling; got != tt.want {
			t.Errorf("%s: scheduling %q, want %q", tt.config, got, tt.want)
		}
	}
}
