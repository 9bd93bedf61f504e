package worker

import (
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/remote"
)

// delivered is a work message as a consumer delivers it.
type delivered struct {
	jetstream.Msg
	m *nats.Msg
}

func (d delivered) Subject() string      { return d.m.Subject }
func (d delivered) Headers() nats.Header { return d.m.Header }
func (d delivered) Data() []byte         { return d.m.Data }

// Ensure a worker takes only work its coordinator signed, of a profile it
// serves and defines, asking only for labels it has, sent lately, whose
// subject is its own; and says why it refuses the rest, telling forged
// work (left for a worker that trusts its signer) from work it can never
// run (taken off the queue).
func TestAccept(t *testing.T) {
	dir := t.TempDir()
	coordPub, _, _ := remote.Keygen(filepath.Join(dir, "coordinator.nk"))
	coord, _ := remote.LoadSigner(filepath.Join(dir, "coordinator.nk"))
	remote.Keygen(filepath.Join(dir, "rogue.nk"))
	rogue, _ := remote.LoadSigner(filepath.Join(dir, "rogue.nk"))
	cfg, _ := config.NewConfig("", nil, nil)
	w := New(Config{Profiles: []string{"exec", "claude"}, Defined: cfg.Profiles, Labels: []string{"gpu"},
		NATS: &config.NATS{CoordinatorKeys: []string{coordPub}}}, slog.New(slog.DiscardHandler))
	if err := w.Check(); err != nil {
		t.Fatal(err)
	}
	w.c = &remote.Client{Prefix: "taskd"}
	work := func() remote.Work {
		return remote.Work{ID: "A1", List: "l", Task: "1", N: 1, Profile: "exec", Prompt: "true", Sent: time.Now()}
	}
	msg := func(wk remote.Work, signer *remote.Signer, subject string) delivered {
		data, _ := json.Marshal(wk)
		if subject == "" {
			subject = remote.WorkSubject("taskd", wk.Profile, wk.Labels, wk.ID)
		}
		m := &nats.Msg{Subject: subject, Data: data}
		if signer != nil {
			signer.Sign(m)
		}
		return delivered{m: m}
	}
	tests := []struct {
		name      string
		m         delivered
		malformed bool   // taken off the queue
		want      string // in the error; "" accepted
	}{
		{"signed by its coordinator", msg(work(), coord, ""), false, ""},
		{"with a label it has", func() delivered { wk := work(); wk.Labels = []string{"gpu"}; return msg(wk, coord, "") }(), false, ""},
		{"unsigned", msg(work(), nil, ""), false, "not signed"},
		{"signed by another key", msg(work(), rogue, ""), false, "not trusted"},
		{"its signature for another subject", func() delivered {
			d := msg(work(), coord, "")
			d.m.Subject = "taskd.work.claude.-.A1"
			return d
		}(), false, "does not verify"},
		{"a profile it does not serve", func() delivered { wk := work(); wk.Profile = "codex"; return msg(wk, coord, "") }(), true, `profile "codex"`},
		{"a label it lacks", func() delivered { wk := work(); wk.Labels = []string{"tpu"}; return msg(wk, coord, "") }(), true, `label "tpu"`},
		{"a profile not its subject's", func() delivered { wk := work(); return msg(wk, coord, "taskd.work.claude.-.A1") }(), true, "not its subject's"},
		{"sent long ago", func() delivered {
			wk := work()
			wk.Sent = time.Now().Add(-8 * 24 * time.Hour)
			return msg(wk, coord, "")
		}(), true, "too long ago"},
		{"a variable not taskd's", func() delivered {
			wk := work()
			wk.Env = map[string]string{"LD_PRELOAD": "/tmp/evil.so"}
			return msg(wk, coord, "")
		}(), true, "none of taskd's"},
	}
	for _, tt := range tests {
		_, err := w.accept(tt.m)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: accept = %v, want an error saying %q", tt.name, err, tt.want)
		case tt.want != "" && errors.Is(err, errMalformed) != tt.malformed:
			t.Errorf("%s: malformed = %v, want %v", tt.name, errors.Is(err, errMalformed), tt.malformed)
		}
	}
}

// Ensure a worker that serves a profile its configuration does not define,
// or has no coordinator key, or a bad label, does not start.
func TestCheck(t *testing.T) {
	cfg, _ := config.NewConfig("", nil, nil)
	key := "UBUBH5ZPLA5TS5O5FIXYUEN6OX2HAZ33AXBFCZBOYFEJJGWO4EJ5TLSS"
	for _, tt := range []struct {
		name string
		c    Config
		want string
	}{
		{"an undefined profile", Config{Profiles: []string{"mine"}, Defined: cfg.Profiles, NATS: &config.NATS{CoordinatorKeys: []string{key}}}, `profile "mine" is not defined`},
		{"no coordinator key", Config{Profiles: []string{"exec"}, Defined: cfg.Profiles}, "nats.coordinatorKeys is empty"},
		{"a bad label", Config{Profiles: []string{"exec"}, Defined: cfg.Profiles, Labels: []string{"Big GPU"}, NATS: &config.NATS{CoordinatorKeys: []string{key}}}, "--label"},
	} {
		err := New(tt.c, slog.New(slog.DiscardHandler)).Check()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Check = %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
}
