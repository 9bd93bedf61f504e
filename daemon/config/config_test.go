package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/config"
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
		fc, err := config.LoadFileConfig(path, false)
		if tt.wantErr != "" {
			if want := fmt.Sprintf(tt.wantErr, path); err == nil || err.Error() != want {
				t.Errorf("%s: error %v, want %q", tt.config, err, want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.config, err)
		}
		cfg, err := config.NewConfig(t.TempDir(), nil, fc)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Scheduling; got != tt.want {
			t.Errorf("%s: scheduling %q, want %q", tt.config, got, tt.want)
		}
	}
}

// TestConfig_Bounds: tree and concurrency limits are whole numbers within
// bounds; anything else is refused naming the field and the bounds.
func TestConfig_Bounds(t *testing.T) {
	for _, tt := range []struct{ config, wantErr string }{
		{`{"maxDepth": 5, "maxChildren": 50, "concurrency": 4}`, ""},
		{`{"maxChildren": -1}`, "maxChildren is -1; it must be between 1 and 1000"},
		{`{"maxDepth": 1000000000}`, "maxDepth is 1000000000; it must be between 1 and 32"},
		{`{"maxDepth": 1e9}`, "maxDepth is number 1e9, want a whole number"},
		{`{"concurrency": 100000}`, "concurrency is 100000; it must be between 1 and 1024"},
		{`{"lists": {"l": {"concurrency": -2}}}`, "lists.l.concurrency is -2"},
	} {
		path := filepath.Join(t.TempDir(), "config.json")
		if err := os.WriteFile(path, []byte(tt.config), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := config.LoadFileConfig(path, false)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v, want no error", tt.config, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want it to say %q", tt.config, err, tt.wantErr)
		}
	}
}

// TestConfig_ProfileEnv: a profile's env entries are names, prefixes or
// settings; anything else, and a setting of a variable taskd sets, is
// refused with the entry.
func TestConfig_ProfileEnv(t *testing.T) {
	for _, tt := range []struct {
		env     []string
		wantErr string
	}{
		{[]string{"HOME", "ANTHROPIC_*", "ANTHROPIC_BASE_URL=http://127.0.0.1:1"}, ""},
		{[]string{"A=b=c"}, ""},
		{[]string{"*"}, `"env" entry "*"`},
		{[]string{"1X"}, `"env" entry "1X"`},
		{[]string{"A B=c"}, `"env" entry "A B=c"`},
		{[]string{"PATH=/tmp"}, "sets a variable taskd sets itself"},
		{[]string{"TASKD_ROOT=/x"}, "sets a variable taskd sets itself"},
	} {
		fc := &config.FileConfig{Profiles: map[string]config.ProfileSpec{"p": {Command: []string{"sh"}, Env: tt.env}}}
		_, err := config.NewConfig(t.TempDir(), nil, fc)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("env %q: NewConfig = %v, want error %q", tt.env, err, tt.wantErr)
		}
	}
}
