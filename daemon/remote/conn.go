package remote

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskd/taskd/daemon/config"
)

// Connect connects to the NATS server at url with the credentials and TLS
// settings of c (which may be nil), as client name. A server that answers
// and refuses the credentials, or whose certificate does not verify, is
// an error at once (ErrRefused): waiting would not change it. Otherwise
// the connection never gives up: it is made even while the server is
// down, and it reconnects for as long as the process runs; disconnects,
// reconnects and a refusal met while reconnecting are logged. ~ in a file
// name is home.
func Connect(url string, c *config.NATS, name, home string, log *slog.Logger) (*nats.Conn, error) {
	if c == nil {
		c = &config.NATS{}
	}
	path := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
			return filepath.Join(home, rest)
		}
		return p
	}
	opts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectBufSize(-1), // a publish while disconnected fails at once, and is tried again
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			log.Warn("lost the NATS server; reconnecting", "url", url, "err", err)
		}),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) {
			if refused(err) {
				log.Error("the NATS server refuses this connection; check the nats settings", "url", url, "err", refusal(err))
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("reconnected to the NATS server", "url", nc.ConnectedUrlRedacted())
		}),
	}
	switch {
	case c.Creds != "":
		opts = append(opts, nats.UserCredentials(path(c.Creds)))
	case c.NKey != "":
		o, err := nats.NkeyOptionFromSeed(path(c.NKey))
		if err != nil {
			return nil, fmt.Errorf("nats nkey %s: %w", c.NKey, err)
		}
		opts = append(opts, o)
	}
	if c.User != "" {
		opts = append(opts, nats.UserInfo(c.User, c.Password))
	}
	if c.Token != "" {
		opts = append(opts, nats.Token(c.Token))
	}
	if t := c.TLS; t != nil {
		if t.CA != "" {
			opts = append(opts, nats.RootCAs(path(t.CA)))
		}
		if t.Cert != "" {
			opts = append(opts, nats.ClientCert(path(t.Cert), path(t.Key)))
		}
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
		opts = append(opts, nats.Secure(cfg))
	}
	for _, f := range []string{c.Creds, c.NKey} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(path(f)); err != nil {
			return nil, fmt.Errorf("nats credentials: %w", err)
		}
	}
	// A first try that does not wait tells a refusal from a server that is
	// not there.
	nc, err := nats.Connect(url, opts...)
	if err == nil {
		return nc, nil
	}
	if refused(err) {
		return nil, fmt.Errorf("connect to %s: %w", url, refusal(err))
	}
	nc, err = nats.Connect(url, append(opts, nats.RetryOnFailedConnect(true))...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", url, err)
	}
	return nc, nil
}

// ErrRefused is the error (wrapped) of a server that refuses a client's
// credentials or TLS settings.
var ErrRefused = errors.New("the NATS server refused the connection")

// refused reports whether err is a server's refusal of the client's
// credentials, or a TLS handshake that failed.
func refused(err error) bool {
	var unknownCA x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var alert tls.AlertError
	for _, e := range []error{nats.ErrAuthorization, nats.ErrAuthExpired, nats.ErrAuthRevoked, nats.ErrAccountAuthExpired,
		nats.ErrSecureConnRequired, nats.ErrSecureConnWanted} {
		if errors.Is(err, e) {
			return true
		}
	}
	return errors.As(err, &unknownCA) || errors.As(err, &host) || errors.As(err, &invalid) || errors.As(err, &verify) || errors.As(err, &alert)
}

// refusal is the error of a refused connection, with what to check.
func refusal(err error) error {
	what := "nats.tls (the CA that signed the server's certificate, a client certificate and key, serverName) and the url's scheme"
	if errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) || errors.Is(err, nats.ErrAuthRevoked) || errors.Is(err, nats.ErrAccountAuthExpired) {
		what = "the credentials: nats.user and nats.password, nats.token, nats.creds or nats.nkey"
	}
	return fmt.Errorf("%w: %w; check %s", ErrRefused, err, what)
}

// Streams are the two streams of a prefix.
type Streams struct {
	Prefix string
	JS     jetstream.JetStream
	Work   jetstream.Stream
	Runs   jetstream.Stream
}

// OpenStreams makes the work and runs streams of prefix if they are not
// there, and returns them. It waits for the server while ctx allows,
// calling wait (if not nil) with the reason after every failed try.
func OpenStreams(ctx context.Context, nc *nats.Conn, prefix string, wait func(error)) (*Streams, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	s := &Streams{Prefix: prefix, JS: js}
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 2*time.Second) {
		if err = s.open(ctx); err == nil {
			return s, nil
		}
		if wait != nil {
			wait(err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("open streams: %w", err)
		case <-time.After(delay):
		}
	}
}

func (s *Streams) open(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	p := s.Prefix
	work, err := ensureStream(ctx, s.JS, jetstream.StreamConfig{
		Name: workStream(p), Subjects: []string{p + ".work.>"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		Duplicates: dedupWindow, MaxMsgSize: 8 << 20,
		Description: "taskd: attempts waiting for a worker",
	})
	if err != nil {
		return err
	}
	runs, err := ensureStream(ctx, s.JS, jetstream.StreamConfig{
		Name: runsStream(p), Subjects: []string{p + ".run.>"},
		Retention: jetstream.LimitsPolicy, Storage: jetstream.FileStorage,
		Duplicates: dedupWindow, MaxAge: RunsMaxAge, MaxMsgSize: 1 << 20,
		Description: "taskd: what workers report of their attempts",
	})
	if err != nil {
		return err
	}
	s.Work, s.Runs = work, runs
	return nil
}

// ensureStream returns stream cfg.Name, made with cfg if it does not
// exist. A stream that exists is used as it is: its settings are the
// operator's to change.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	st, err := js.Stream(ctx, cfg.Name)
	if err == nil {
		return st, nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("stream %s: %w", cfg.Name, err)
	}
	st, err = js.CreateStream(ctx, cfg)
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return js.Stream(ctx, cfg.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("create stream %s: %w", cfg.Name, err)
	}
	return st, nil
}

// Last returns the data of the last message on the run subject kind of
// attempt id, or nil if there is none.
func (s *Streams) Last(ctx context.Context, id, kind string) ([]byte, error) {
	m, err := s.Runs.GetLastMsgForSubject(ctx, runSubject(s.Prefix, id, kind))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if m.Data == nil {
		return []byte{}, nil
	}
	return m.Data, nil
}

// Publish publishes data on the run subject kind of attempt id and waits
// for the stream to store it. A non-empty msgID de-duplicates; dup
// reports that the stream already had a message with that id.
func (s *Streams) Publish(ctx context.Context, id, kind string, data []byte, msgID string, hdr nats.Header) (dup bool, err error) {
	m := &nats.Msg{Subject: runSubject(s.Prefix, id, kind), Data: data, Header: hdr}
	var opts []jetstream.PublishOpt
	if msgID != "" {
		opts = append(opts, jetstream.WithMsgID(msgID))
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ack, err := s.JS.PublishMsg(ctx, m, opts...)
	if err != nil {
		return false, fmt.Errorf("publish %s of attempt %s: %w", kind, id, err)
	}
	return ack.Duplicate, nil
}

// Forget removes what the runs stream holds of attempt id.
func (s *Streams) Forget(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return s.Runs.Purge(ctx, jetstream.WithPurgeSubject(s.Prefix+".run."+id+".>"))
}
