package main

import (
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/remote"
)

// Ensure taskd workers tells a heartbeat's age against the server's clock
// (the server stamps what it stores), not this machine's: with this
// machine's clock an hour ahead of the server's, a worker heard a second
// ago is serving, not silent for an hour.
func TestPrintPool_ServerClock(t *testing.T) {
	server := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	hb := remote.Heartbeat{Name: "w1", Host: "h", Version: "v", Profiles: []string{"exec"}, Slots: 2, Interval: remote.Duration(5 * time.Second)}
	view := &remote.PoolView{
		Workers:    []remote.WorkerInfo{{Key: "K", Trusted: true, Heartbeat: hb, Stored: server.Add(-time.Second)}},
		ServerTime: server,
	}
	tests := []struct {
		name      string
		localSkew time.Duration
	}{
		{"same clock", 0},
		{"this machine an hour ahead", time.Hour},
		{"this machine an hour behind", -time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			printPool(&b, view, server.Add(tc.localSkew))
			if got := b.String(); !lineHas(got, "w1", "1s ago", "serving") {
				t.Errorf("got:\n%s\nwant w1 serving, heard 1s ago", got)
			}
		})
	}
}

func lineHas(out string, words ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		all := true
		for _, w := range words {
			all = all && strings.Contains(l, w)
		}
		if all {
			return true
		}
	}
	return false
}
