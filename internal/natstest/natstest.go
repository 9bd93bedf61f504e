// Package natstest runs a real NATS server with JetStream inside a test
// process, on a random loopback port, with its store in the test's
// temporary directory. Only tests import it: the server is never linked
// into taskd.
package natstest

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Server is an embedded server. Stop and Restart it to test outages: it
// comes back on the same port with the same store.
type Server struct {
	t    testing.TB
	dir  string
	port int
	srv  *server.Server
}

// Start starts a server for t and stops it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, dir: t.TempDir(), port: -1}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start() {
	s.t.Helper()
	opts := &server.Options{
		Host: "127.0.0.1", Port: s.port, JetStream: true, StoreDir: s.dir,
		NoLog: true, NoSigs: true, ServerName: "taskd-test",
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

// URL is the server's address.
func (s *Server) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.port) }

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
