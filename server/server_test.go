package server

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kgo"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// serve opens a server over dir on an ephemeral port and serves it; the
// returned channel receives Serve's result.
func serve(t *testing.T, dir string) (*Server, <-chan error) {
	t.Helper()
	s, err := Open(Config{DataDir: dir, Listen: "127.0.0.1:0", Resolver: resolver.Config{NumPartitions: 1, AutoCreate: true}})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	t.Cleanup(func() { s.Close() })
	return s, served
}

func client(t *testing.T, s *Server) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addr().String()), kgo.AllowAutoTopicCreation(),
		kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// A served server produces and fetches; Close makes Serve return nil, is
// not ready any more and is idempotent; reopening the directory finds the
// record (the layers were closed, releasing their locks).
func TestOpenServeCloseReopen(t *testing.T) {
	dir := t.TempDir()
	s, served := serve(t, dir)
	cl := client(t, s)
	if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(); err != nil {
		t.Fatalf("ready while serving: %v", err)
	}
	cl.Close()
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("serve after close: %v", err)
	}
	if s.Ready() == nil {
		t.Fatal("ready after close")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}

	s2, _ := serve(t, dir)
	fs := client(t, s2).PollFetches(testCtx(t))
	if err := fs.Err(); err != nil {
		t.Fatal(err)
	}
	if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != "v" {
		t.Fatalf("after reopen: %d records", len(recs))
	}
}

// Without a listener the layers are open but nothing is served.
func TestNoListener(t *testing.T) {
	s, err := Open(Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Addr() != nil {
		t.Fatalf("addr %v without a listener", s.Addr())
	}
	if err := s.Serve(); !errors.Is(err, ErrNoListener) {
		t.Fatalf("serve: %v", err)
	}
	if _, err := s.Resolver().CreateTopic("t", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}
}

// A failed Open closes every layer it opened: a second Open of the same
// directory succeeds once the cause is gone.
func TestOpenFailureClosesLayers(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	if _, err := Open(Config{DataDir: dir, Listen: taken.Addr().String()}); err == nil {
		t.Fatal("open on a taken address succeeded")
	}
	// The offsets store's directory is a file: storage and the resolver
	// open, offsets fails.
	if err := os.RemoveAll(filepath.Join(dir, "offsets")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "offsets"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Config{DataDir: dir}); err == nil {
		t.Fatal("open with offsets/ a file succeeded")
	}
	if err := os.Remove(filepath.Join(dir, "offsets")); err != nil {
		t.Fatal(err)
	}
	s, err := Open(Config{DataDir: dir})
	if err != nil {
		t.Fatalf("open after failures: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
