// Package etcdtest runs a real etcd for tests: an embedded single-member
// server (go.etcd.io/etcd/server/v3/embed) on loopback ephemeral ports,
// with its data in the test's temporary directory. It can be stopped and
// restarted on the same endpoint, keeping its data, so tests can show what
// clients do while etcd is down and after it comes back.
package etcdtest

import (
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// StartTimeout bounds how long a start (or restart) may take to become
// ready: generous, for a loaded machine.
const StartTimeout = 60 * time.Second

// Server is one embedded etcd member.
type Server struct {
	t   testing.TB
	dir string

	mu     sync.Mutex
	e      *embed.Etcd
	client url.URL // fixed by the first start, kept across restarts
	peer   url.URL
}

// Start starts an etcd in a fresh directory of t and stops it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		t:      t,
		dir:    t.TempDir(),
		client: url.URL{Scheme: "http", Host: "127.0.0.1:0"},
		peer:   url.URL{Scheme: "http", Host: "127.0.0.1:0"},
	}
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Endpoint is the client URL, the same across restarts.
func (s *Server) Endpoint() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.client.String()
}

// Dir is the data directory.
func (s *Server) Dir() string { return s.dir }

// Running reports whether the server is started.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.e != nil
}

// Stop stops the server, keeping its data (no error if already stopped).
func (s *Server) Stop() {
	s.mu.Lock()
	e := s.e
	s.e = nil
	s.mu.Unlock()
	if e != nil {
		e.Close()
	}
}

// Restart starts a stopped server again on the same endpoint and data
// (or stops and starts a running one).
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

// Client returns a client of the server, closed when the test ends.
func (s *Server) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(ClientConfig(s.Endpoint()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ClientConfig is a client configuration for endpoint, quiet and with a
// dial timeout.
func ClientConfig(endpoint string) clientv3.Config {
	return clientv3.Config{
		Endpoints:   []string{endpoint},
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
	}
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cfg := embed.NewConfig()
	cfg.Name = "etcdtest"
	cfg.Dir = s.dir
	cfg.ListenClientUrls = []url.URL{s.client}
	cfg.AdvertiseClientUrls = []url.URL{s.client}
	cfg.ListenPeerUrls = []url.URL{s.peer}
	cfg.AdvertisePeerUrls = []url.URL{s.peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	// A process stop (Close) keeps every write: fsync only matters for a
	// machine crash, which a test does not simulate, and costs much on a
	// shared disk.
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("etcdtest: start: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return fmt.Errorf("etcdtest: start: %w", err)
	case <-time.After(StartTimeout):
		e.Server.Stop()
		e.Close()
		return fmt.Errorf("etcdtest: not ready after %v", StartTimeout)
	}
	// Keep the ports the first start bound, so clients reconnect to the
	// same endpoint after a restart.
	s.client.Host = e.Clients[0].Addr().String()
	s.peer.Host = e.Peers[0].Addr().String()
	s.e = e
	return nil
}
