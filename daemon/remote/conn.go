package remote

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskd/taskd/daemon/config"
)

// A Conn is a connection to the NATS server that remembers what the
// server refused it lately (a permission it lacks), so that an error met
// meanwhile — a request that times out because the server dropped it —
// is named for what it is (Explain).
type Conn struct {
	*nats.Conn
	url string
	log *slog.Logger

	back chan struct{} // a value after every reconnection

	mu     sync.Mutex // protects the fields below
	denied []denial   // the latest permission violations, newest last
	since  time.Time  // when the connection was last made
}

// Reconnected delivers a value after the connection is made again.
func (c *Conn) Reconnected() <-chan struct{} { return c.back }

// ConnectedSince is when the connection was last made (or made again);
// zero from when it was lost until this side has learnt it is back: the
// client connects again before it says so, and what was heard before the
// loss must not be taken for what is heard since.
func (c *Conn) ConnectedSince() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.since
}

func (c *Conn) disconnected() {
	c.mu.Lock()
	c.since = time.Time{}
	c.mu.Unlock()
}

func (c *Conn) connected() {
	c.mu.Lock()
	c.since = time.Now()
	c.mu.Unlock()
	select {
	case c.back <- struct{}{}:
	default:
	}
}

type denial struct {
	at  time.Time
	err error
}

// A Dial is how Connect reaches the NATS server: at URL, with the
// credentials and TLS settings of NATS (which may be nil), as client
// Name, with replies to subjects under Inbox (CoordinatorInbox,
// WorkerInbox); ~ in a file name is Home; Log is told what happens to
// the connection.
type Dial struct {
	URL         string
	NATS        *config.NATS
	Name, Inbox string
	Home        string
	Log         *slog.Logger
}

// Connect connects to the NATS server as d says. A server that answers
// and refuses the credentials, or whose certificate does not verify, is
// an error at once (ErrRefused): waiting would not change it. Otherwise
// the connection never gives up: it is made even while the server is
// down, and it reconnects for as long as the process runs; disconnects,
// reconnects, a refusal met while reconnecting and the permissions the
// server denies are logged.
func Connect(d Dial) (*Conn, error) {
	url, c, name, inbox, home, log := d.URL, d.NATS, d.Name, d.Inbox, d.Home, d.Log
	if c == nil {
		c = &config.NATS{}
	}
	conn := &Conn{url: url, log: log, back: make(chan struct{}, 1)}
	path := func(p string) string { return expandHome(p, home) }
	opts := []nats.Option{
		nats.Name(name),
		nats.CustomInboxPrefix(inbox),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectBufSize(-1), // a publish while disconnected fails at once, and is tried again
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			conn.disconnected()
			if !nc.IsClosed() {
				log.Warn("lost the NATS server; reconnecting", "url", url, "err", err)
			}
		}),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) {
			if refused(err) {
				log.Error("the NATS server refuses this connection; check the nats settings", "url", url, "err", refusal(err))
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			conn.connected()
			log.Info("reconnected to the NATS server", "url", nc.ConnectedUrlRedacted())
		}),
		nats.ConnectHandler(func(*nats.Conn) { conn.connected() }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { conn.asyncError(err) }),
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
	if err != nil && refused(err) {
		return nil, fmt.Errorf("connect to %s: %w", url, refusal(err))
	}
	if err != nil {
		nc, err = nats.Connect(url, append(opts, nats.RetryOnFailedConnect(true))...)
		if err != nil {
			return nil, fmt.Errorf("connect to %s: %w", url, err)
		}
	}
	conn.Conn = nc
	if nc.IsConnected() {
		conn.connected()
	}
	return conn, nil
}

// asyncError takes an error the server reported outside any request: a
// permission it denied is logged (once a minute for the same) and kept
// for Explain.
func (c *Conn) asyncError(err error) {
	if !errors.Is(err, nats.ErrPermissionViolation) {
		c.log.Warn("the NATS server reports an error", "err", err)
		return
	}
	c.mu.Lock()
	now := time.Now()
	repeated := false
	for _, d := range c.denied {
		if d.err.Error() == err.Error() && now.Sub(d.at) < time.Minute {
			repeated = true
		}
	}
	c.denied = append(c.denied, denial{now, err})
	if len(c.denied) > 16 {
		c.denied = c.denied[len(c.denied)-16:]
	}
	c.mu.Unlock()
	if !repeated {
		c.log.Error("permission denied by the NATS server: this user lacks a permission taskd needs (docs/distributed.md lists them by role)", "url", c.url, "err", err)
	}
}

// ErrPermission marks an error caused by a permission the server denies.
var ErrPermission = errors.New("permission denied")

// Explain names what err, met on the connection, is: a permission the
// server denied meanwhile (ErrPermission), no responders (nothing answers
// the subject: JetStream is not enabled for the user's account, or the
// stream is missing), the server out of reach. Other errors are returned
// as they are.
func (c *Conn) Explain(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) {
		return fmt.Errorf("no responders: nothing on the NATS server at %s answers (JetStream is not enabled for this user's account, or the stream is missing): %w", c.url, err)
	}
	timeout := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout)
	if timeout {
		c.mu.Lock()
		var last *denial
		if n := len(c.denied); n > 0 && time.Since(c.denied[n-1].at) < 30*time.Second {
			last = &c.denied[n-1]
		}
		c.mu.Unlock()
		if last != nil {
			return fmt.Errorf("%w: %w (docs/distributed.md lists the permissions of each role)", ErrPermission, last.err)
		}
	}
	if !c.IsConnected() {
		return fmt.Errorf("the NATS server at %s cannot be reached: %w", c.url, err)
	}
	return err
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
