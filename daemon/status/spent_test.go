package status_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/status"
)

// TestSpent: the attempts that ended since a time are added up by
// profile; earlier ones, an attempt with no cost and one still running
// are not. RunProfile reads an attempt's profile.
func TestSpent(t *testing.T) {
	list := t.TempDir()
	since := time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC)
	for _, r := range []struct{ n, profile, result string }{
		{"1", "claude", `{"costUsd": 0.5, "startedAt": "2026-03-19T23:00:00Z", "durationMs": 60000}`},  // ended the day before
		{"2", "claude", `{"costUsd": 0.25, "startedAt": "2026-03-19T23:59:30Z", "durationMs": 60000}`}, // ended after since
		{"3", "codex", `{"costUsd": 0.125, "startedAt": "2026-03-20T08:00:00Z", "durationMs": 1000}`},
		{"4", "claude", `{"startedAt": "2026-03-20T09:00:00Z", "durationMs": 1000}`}, // no cost
		{"5", "claude", ``}, // running
		{"6", "claude", `{"costUsd": 0.0625, "startedAt": "2026-03-20T10:00:00Z", "durationMs": 1000}`},
	} {
		dir := filepath.Join(list, ".taskd", "runs", "7", r.n)
		os.MkdirAll(dir, 0o700)
		os.WriteFile(filepath.Join(dir, "cmd.json"), []byte(`{"profile": "`+r.profile+`"}`), 0o600)
		if r.result != "" {
			os.WriteFile(filepath.Join(dir, "result.json"), []byte(r.result), 0o600)
		}
	}
	got := status.Spent(list, "7", since)
	if len(got) != 2 || got["claude"] != 0.3125 || got["codex"] != 0.125 {
		t.Errorf("Spent = %v, want claude 0.3125, codex 0.125", got)
	}
	if got, want := status.RunProfile(list, "7", 3), "codex"; got != want {
		t.Errorf("RunProfile = %q, want %q", got, want)
	}
	if got := status.RunProfile(list, "7", 9); got != "" {
		t.Errorf("RunProfile of no attempt = %q", got)
	}
}
