package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/config"
)

// TestConfig_Retention: the retention policy has defaults, takes ages in
// days or as durations, "off" for no age limit, and refuses what would
// remove too much or makes no sense, naming the key.
func TestConfig_Retention(t *testing.T) {
	day := 24 * time.Hour
	for _, tt := range []struct {
		config  string
		want    config.Retention
		wantErr string
	}{
		{`{}`, config.Retention{MaxAge: 30 * day, KeepRuns: 3, EventsMaxBytes: 10 << 20, EventsKeep: 3, SucceededTasks: 7 * day, FailedTasks: 30 * day}, ""},
		{`{"retention": {"maxAge": "7d", "keepRuns": 0, "eventsMaxMiB": 1, "eventsKeep": 0}}`,
			config.Retention{MaxAge: 7 * day, KeepRuns: 0, EventsMaxBytes: 1 << 20, EventsKeep: 0, SucceededTasks: 7 * day, FailedTasks: 30 * day}, ""},
		{`{"retention": {"maxAge": "36h", "succeededTasks": "1d", "failedTasks": "off"}}`, config.Retention{MaxAge: 36 * time.Hour, KeepRuns: 3, EventsMaxBytes: 10 << 20, EventsKeep: 3, SucceededTasks: day}, ""},
		{`{"retention": {"maxAge": "off", "eventsMaxMiB": 0, "succeededTasks": "off"}}`, config.Retention{KeepRuns: 3, EventsKeep: 3, FailedTasks: 30 * day}, ""},
		{`{"retention": {"succeededTasks": "0d"}}`, config.Retention{}, `retention.succeededTasks is 0`},
		{`{"retention": {"failedTasks": "forever"}}`, config.Retention{}, `retention.failedTasks: "forever" is not an age`},
		{`{"retention": {"maxAge": "0d"}}`, config.Retention{}, `retention.maxAge is 0`},
		{`{"retention": {"maxAge": "a month"}}`, config.Retention{}, `retention.maxAge: "a month" is not an age`},
		{`{"retention": {"keepRuns": -1}}`, config.Retention{}, `retention.keepRuns is -1`},
		{`{"retention": {"keep": 1}}`, config.Retention{}, `unknown field "keep"`},
	} {
		path := filepath.Join(t.TempDir(), "config.json")
		if err := os.WriteFile(path, []byte(tt.config), 0o644); err != nil {
			t.Fatal(err)
		}
		fc, err := config.LoadFileConfig(path, false)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want it to say %q", tt.config, err, tt.wantErr)
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
		if got := cfg.Retention; got != tt.want {
			t.Errorf("%s: retention %+v, want %+v", tt.config, got, tt.want)
		}
	}
}

func TestParseAge(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30d", 30 * 24 * time.Hour, true},
		{"0d", 0, true},
		{"90m", 90 * time.Minute, true},
		{"1.5h", 90 * time.Minute, true},
		{"-1d", 0, false},
		{"-5m", 0, false},
		{"d", 0, false},
		{"3 days", 0, false},
	} {
		got, err := config.ParseAge(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
