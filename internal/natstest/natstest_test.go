package natstest_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/taskd/taskd/internal/natstest"
)

// TestStart: a server on loopback with JetStream, whose store survives a
// restart on the same port.
func TestStart(t *testing.T) {
	s := natstest.Start(t)
	url := s.URL()
	if !strings.HasPrefix(url, "nats://127.0.0.1:") {
		t.Fatalf("URL = %s, want nats on loopback", url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "t.one", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	nc.Close()

	s.Stop()
	s.Stop() // idempotent
	if _, err := nats.Connect(url, nats.Timeout(time.Second)); err == nil {
		t.Fatal("a stopped server took a connection")
	}
	s.Restart()
	if s.URL() != url {
		t.Errorf("restarted at %s, want %s", s.URL(), url)
	}
	nc, err = nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ = jetstream.New(nc)
	stream, err := js.Stream(ctx, "T")
	if err != nil {
		t.Fatalf("the stream did not survive the restart: %v", err)
	}
	msg, err := stream.GetLastMsgForSubject(ctx, "t.one")
	if err != nil || string(msg.Data) != "kept" {
		t.Errorf("the message after the restart: %v, %v", msg, err)
	}
}

// TestStartWith: a server that asks for credentials refuses a client
// without them, and one that speaks TLS takes only clients that trust its
// CA.
func TestStartWith(t *testing.T) {
	for _, tt := range []struct {
		name   string
		opts   natstest.Options
		good   []nats.Option
		bad    [][]nats.Option
		scheme string
	}{
		{name: "user and password", opts: natstest.Options{User: "u", Password: "p"}, scheme: "nats://",
			good: []nats.Option{nats.UserInfo("u", "p")},
			bad:  [][]nats.Option{nil, {nats.UserInfo("u", "wrong")}, {nats.Token("p")}}},
		{name: "token", opts: natstest.Options{Token: "secret"}, scheme: "nats://",
			good: []nats.Option{nats.Token("secret")},
			bad:  [][]nats.Option{nil, {nats.Token("other")}}},
		{name: "TLS", opts: natstest.Options{TLS: true}, scheme: "tls://",
			bad: [][]nats.Option{nil}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := natstest.StartWith(t, tt.opts)
			if !strings.HasPrefix(s.URL(), tt.scheme) {
				t.Errorf("URL = %s, want %s", s.URL(), tt.scheme)
			}
			good := tt.good
			if tt.opts.TLS {
				if s.CAFile() == "" {
					t.Fatal("no CA file for a TLS server")
				}
				good = append(good, nats.RootCAs(s.CAFile()))
			} else if s.CAFile() != "" {
				t.Errorf("CAFile = %s for a server without TLS", s.CAFile())
			}
			nc, err := nats.Connect(s.URL(), good...)
			if err != nil {
				t.Fatalf("a client with what the server asks: %v", err)
			}
			if err := nc.Flush(); err != nil {
				t.Errorf("flush: %v", err)
			}
			nc.Close()
			for i, opts := range tt.bad {
				opts = append(opts, nats.Timeout(5*time.Second), nats.MaxReconnects(0))
				if nc, err := nats.Connect(s.URL(), opts...); err == nil {
					nc.Close()
					t.Errorf("bad client %d connected", i)
				}
			}
		})
	}
}

// TestProcess: a real nats-server process with its own configuration:
// JetStream whose store survives a restart, is gone after a wipe, and a
// configuration that asks for TLS with the certificates WriteTLS made.
func TestProcess(t *testing.T) {
	p := natstest.StartProcess(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	publish := func() {
		t.Helper()
		nc, err := nats.Connect(p.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, Storage: jetstream.FileStorage}); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "t.one", []byte("kept")); err != nil {
			t.Fatal(err)
		}
	}
	streams := func() int {
		t.Helper()
		nc, err := nats.Connect(p.URL(), nats.Timeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		n := 0
		for range js.StreamNames(ctx).Name() {
			n++
		}
		return n
	}
	if !strings.HasSuffix(p.URL(), ":"+strconv.Itoa(p.Port())) {
		t.Errorf("URL %s, port %d", p.URL(), p.Port())
	}
	publish()
	p.Stop()
	p.Stop() // idempotent
	if _, err := nats.Connect(p.URL(), nats.Timeout(time.Second)); err == nil {
		t.Fatal("a stopped server took a connection")
	}
	p.Restart()
	if n := streams(); n != 1 {
		t.Errorf("%d streams after a restart, want the one kept", n)
	}
	p.Stop()
	p.Wipe()
	p.Restart()
	if n := streams(); n != 0 {
		t.Errorf("%d streams after a wipe, want none", n)
	}
	if !strings.Contains(p.Output(), "JetStream") {
		t.Errorf("the server's output does not mention JetStream:\n%s", p.Output())
	}

	dir := t.TempDir()
	natstest.WriteTLS(t, dir)
	tlsConf := "tls {\n  cert_file: " + strconv.Quote(filepath.Join(dir, "server.pem")) + "\n  key_file: " + strconv.Quote(filepath.Join(dir, "server-key.pem")) + "\n}\n"
	s := natstest.StartProcess(t, tlsConf)
	nc, err := nats.Connect("tls://127.0.0.1:"+strconv.Itoa(s.Port()), nats.RootCAs(filepath.Join(dir, "ca.pem")))
	if err != nil {
		t.Fatalf("a client trusting the CA: %v\n%s", err, s.Output())
	}
	nc.Close()
	if nc, err := nats.Connect("tls://127.0.0.1:"+strconv.Itoa(s.Port()), nats.Timeout(5*time.Second), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Error("a client that does not trust the CA connected")
	}
}
