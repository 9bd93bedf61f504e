package remote

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
)

func TestSignVerify(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.nk")
	pub, made, err := Keygen(path)
	if err != nil || !made {
		t.Fatalf("Keygen = %q, %v, %v", pub, made, err)
	}
	if again, made, err := Keygen(path); err != nil || made || again != pub {
		t.Errorf("Keygen of an existing key = %q, %v, %v; want %q, false", again, made, err, pub)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("the seed file's mode is %o", fi.Mode().Perm())
	}
	s, err := LoadSigner(path)
	if err != nil {
		t.Fatal(err)
	}
	other, _, _ := Keygen(filepath.Join(dir, "other.nk"))
	trust, err := NewTrust("keys", []string{pub})
	if err != nil {
		t.Fatal(err)
	}
	signed := func() *nats.Msg {
		m := &nats.Msg{Subject: "taskd.run.A.out", Data: []byte("hello"), Header: nats.Header{OffsetHeader: {"10"}}}
		s.Sign(m)
		return m
	}
	tests := []struct {
		name  string
		edit  func(m *nats.Msg)
		trust Trust
		want  error
	}{
		{"as signed", func(*nats.Msg) {}, trust, nil},
		{"another attempt's subject", func(m *nats.Msg) { m.Subject = "taskd.run.B.out" }, trust, ErrBadSig},
		{"another offset", func(m *nats.Msg) { m.Header.Set(OffsetHeader, "0") }, trust, ErrBadSig},
		{"other data", func(m *nats.Msg) { m.Data = []byte("hellO") }, trust, ErrBadSig},
		{"unsigned", func(m *nats.Msg) { m.Header.Del(SigHeader) }, trust, ErrUnsigned},
		{"a key not trusted", func(*nats.Msg) {}, Trust{other: true}, ErrUntrusted},
		{"another key claimed", func(m *nats.Msg) { m.Header.Set(KeyHeader, other) }, Trust{pub: true, other: true}, ErrBadSig},
		{"a signature that is no base64", func(m *nats.Msg) { m.Header.Set(SigHeader, "!!") }, trust, ErrBadSig},
	}
	for _, tt := range tests {
		m := signed()
		tt.edit(m)
		_, err := tt.trust.Verify(m.Subject, m.Header, m.Data)
		if !errors.Is(err, tt.want) && !(err == nil && tt.want == nil) {
			t.Errorf("%s: Verify = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestLoadSignerRefuses(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open.nk")
	if _, _, err := Keygen(open); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o644)
	notSeed := filepath.Join(dir, "not.nk")
	os.WriteFile(notSeed, []byte("UABC"), 0o600)
	for _, tt := range []struct{ path, want string }{
		{open, "chmod 600"},
		{notSeed, "not an nkey seed"},
		{filepath.Join(dir, "missing.nk"), "taskd keygen"},
	} {
		if _, err := LoadSigner(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("LoadSigner(%s) = %v, want an error saying %q", filepath.Base(tt.path), err, tt.want)
		}
	}
	if _, err := NewTrust("nats.workerKeys", []string{"SUAB"}); err == nil || !strings.Contains(err.Error(), "nats.workerKeys") {
		t.Errorf("NewTrust of a seed = %v", err)
	}
}
