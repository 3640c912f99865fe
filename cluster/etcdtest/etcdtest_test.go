package etcdtest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/etcdtest"
)

// TestRestartKeepsDataAndEndpoint: a write survives a stop and a restart,
// the endpoint stays the same, and while stopped a request fails.
func TestRestartKeepsDataAndEndpoint(t *testing.T) {
	s := etcdtest.Start(t)
	ep := s.Endpoint()
	if !strings.HasPrefix(ep, "http://127.0.0.1:") || strings.HasSuffix(ep, ":0") {
		t.Fatalf("endpoint %q: want a bound loopback port", ep)
	}
	c := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Put(ctx, "k", "v1"); err != nil {
		t.Fatal(err)
	}

	s.Stop()
	if s.Running() {
		t.Fatal("running after Stop")
	}
	down, cancelDown := context.WithTimeout(ctx, 2*time.Second)
	_, err := c.Get(down, "k")
	cancelDown()
	if err == nil {
		t.Fatal("get succeeded while etcd was stopped")
	}

	s.Restart()
	if got := s.Endpoint(); got != ep {
		t.Fatalf("endpoint %q after restart, was %q", got, ep)
	}
	// The same client reconnects by itself.
	resp, err := c.Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v1" {
		t.Fatalf("after restart: %v", resp.Kvs)
	}
}
