package main

import (
	"context"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestServesAndKeepsData: the command serves clients on the URL it
// reports, and a second run over the same directory has the first run's
// writes.
func TestServesAndKeepsData(t *testing.T) {
	dir := t.TempDir()
	cfg := config{dataDir: dir, clientURLs: "http://127.0.0.1:0", peerURLs: "http://127.0.0.1:0", logLevel: "error"}
	for i, val := range []string{"first", ""} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		ready := make(chan string, 1)
		done := make(chan error, 1)
		go func() { done <- run(ctx, cfg, func(c []string) { ready <- c[0] }) }()
		var ep string
		select {
		case ep = <-ready:
		case err := <-done:
			t.Fatalf("run %d: %v", i, err)
		}
		cli, err := clientv3.New(etcdtest.ClientConfig(ep))
		if err != nil {
			t.Fatal(err)
		}
		if val != "" {
			if _, err := cli.Put(ctx, "k", val); err != nil {
				t.Fatal(err)
			}
		} else if resp, err := cli.Get(ctx, "k"); err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "first" {
			t.Fatalf("second run: %v %v", resp, err)
		}
		cli.Close()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("run %d stopped with %v", i, err)
		}
	}
}
