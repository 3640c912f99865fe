package node

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestOpenWithoutEtcdFails: a node whose etcd cannot be reached fails to
// open, naming etcd, instead of waiting for ever for its session's lease
// (the etcd client waits for a connection).
func TestOpenWithoutEtcdFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	type result struct {
		n   *Node
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := Open(Config{NodeID: 1, Endpoints: []string{endpoint}})
		done <- result{n, err}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case r := <-done:
		if r.err == nil {
			r.n.Close()
			t.Fatal("Open succeeded without etcd")
		}
		if !strings.Contains(r.err.Error(), "etcd") {
			t.Errorf("error does not say what blocked the start: %v", r.err)
		}
	case <-ctx.Done():
		t.Fatalf("Open still waiting for an unreachable etcd after %v", 30*time.Second)
	}
}
