package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNATSConfig(t *testing.T) {
	tests := []struct {
		name, file string
		wantErr    string // empty: valid
	}{
		{"absent", `{}`, ""},
		{"url and local", `{"nats": {"url": "nats://127.0.0.1:4222", "local": ["exec", "nightly"]}}`, ""},
		{"tls", `{"nats": {"url": "tls://h:4222", "tls": {"ca": "ca.pem", "cert": "c.pem", "key": "k.pem"}}}`, ""},
		{"cert without key", `{"nats": {"tls": {"cert": "c.pem"}}}`, "cert and key go together"},
		{"bad prefix", `{"nats": {"prefix": "a.b"}}`, "nats.prefix"},
		{"short ack wait", `{"nats": {"ackWait": "10ms"}}`, "nats.ackWait"},
		{"token and creds", `{"nats": {"token": "t", "creds": "x.creds"}}`, "token excludes"},
		{"unknown key", `{"nats": {"urls": "x"}}`, "unknown field"},
		{"keys", `{"nats": {"signingKey": "c.nk", "workerKeys": ["UBUBH5ZPLA5TS5O5FIXYUEN6OX2HAZ33AXBFCZBOYFEJJGWO4EJ5TLSS"]}}`, ""},
		{"bad worker key", `{"nats": {"workerKeys": ["SUAB"]}}`, "nats.workerKeys"},
		{"bad coordinator key", `{"nats": {"coordinatorKeys": ["not a key"]}}`, "nats.coordinatorKeys"},
		{"short lost after", `{"nats": {"lostAfter": "1ms"}}`, "nats.lostAfter"},
		{"bad heartbeat", `{"nats": {"heartbeat": "often"}}`, "nats.heartbeat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			os.WriteFile(path, []byte(tt.file), 0o600)
			_, err := LoadFileConfig(path, false)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("LoadFileConfig(%s) = %v, want error containing %q", tt.file, err, tt.wantErr)
			}
		})
	}
}

func TestNATSDefaults(t *testing.T) {
	var n *NATS
	if got, want := n.PrefixOr(), "taskd"; got != want {
		t.Errorf("PrefixOr() = %q, want %q", got, want)
	}
	if got, want := (&NATS{AckWait: "5s"}).AckWaitOr(), 5*time.Second; got != want {
		t.Errorf("AckWaitOr() = %s, want %s", got, want)
	}
	if got, want := n.AckWaitOr(), DefaultAckWait; got != want {
		t.Errorf("AckWaitOr() = %s, want %s", got, want)
	}
}
