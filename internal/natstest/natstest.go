// Package natstest runs a real NATS server with JetStream inside a test
// process, on a random loopback port, with its store in the test's
// temporary directory; on request it asks clients for a user and
// password or a token, and speaks only TLS, with a certificate signed by
// a CA made for the test. Only tests import it: the server is never
// linked into taskd.
package natstest

import (
	"crypto/tls"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Options are what a server asks of its clients. The zero value asks
// nothing.
type Options struct {
	User, Password string // a user and password every client must give
	Token          string // a token every client must give
	TLS            bool   // TLS only, with a certificate for 127.0.0.1 signed by CAFile
}

// Server is an embedded server. Stop and Restart it to test outages: it
// comes back on the same port with the same store.
type Server struct {
	t    testing.TB
	dir  string
	port int
	opts Options
	tls  *tls.Config // the server's, when opts.TLS
	ca   string      // the CA's certificate file, when opts.TLS
	srv  *server.Server
}

// Start starts a server for t and stops it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith starts a server that asks clients what o says, for t, and
// stops it when t ends.
func StartWith(t testing.TB, o Options) *Server {
	t.Helper()
	s := &Server{t: t, dir: t.TempDir(), port: -1, opts: o}
	if o.TLS {
		s.tls, s.ca = newTLS(t)
	}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

// CAFile is the file of the CA certificate that signed the server's
// (TLS only).
func (s *Server) CAFile() string { return s.ca }

func (s *Server) start() {
	s.t.Helper()
	opts := &server.Options{
		Host: "127.0.0.1", Port: s.port, JetStream: true, StoreDir: s.dir,
		NoLog: true, NoSigs: true, ServerName: "taskd-test",
		Username: s.opts.User, Password: s.opts.Password, Authorization: s.opts.Token,
	}
	if s.tls != nil {
		opts.TLS, opts.TLSConfig, opts.TLSTimeout = true, s.tls, 5
	}
	var err error
	for range 50 { // the port of a server just stopped may take a moment to be free
		var srv *server.Server
		if srv, err = server.NewServer(opts); err == nil {
			go srv.Start()
			if srv.ReadyForConnections(10 * time.Second) {
				s.srv = srv
				s.port = srv.Addr().(*net.TCPAddr).Port
				return
			}
			srv.Shutdown()
			err = fmt.Errorf("not ready for connections")
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("start the NATS server: %v", err)
}

// URL is the server's address: tls:// when it speaks only TLS.
func (s *Server) URL() string {
	scheme := "nats"
	if s.tls != nil {
		scheme = "tls"
	}
	return fmt.Sprintf("%s://127.0.0.1:%d", scheme, s.port)
}

// Stop stops the server (idempotent).
func (s *Server) Stop() {
	if s.srv != nil {
		s.srv.Shutdown()
		s.srv.WaitForShutdown()
		s.srv = nil
	}
}

// Restart starts the stopped server again, on the same port and store.
func (s *Server) Restart() {
	s.t.Helper()
	s.start()
}
