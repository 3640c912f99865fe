package etcdserver_test

import (
	"context"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/kgateway/kgateway/test/etcdserver"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestPins: the etcd the tests run is the one kgateway is built against,
// and the one `make deps` builds.
func TestPins(t *testing.T) {
	for file, re := range map[string]string{
		"../../go.mod":   `go\.etcd\.io/etcd/server/v3 (v\S+)`,
		"../../Makefile": `ETCD_VERSION := (v\S+)`,
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(re).FindSubmatch(b)
		if m == nil || string(m[1]) != etcdserver.Version {
			t.Errorf("%s pins etcd %q, the tests run %s", file, m, etcdserver.Version)
		}
	}
}

// TestQuorumSurvivesAKill: with one member of three killed, writes and
// linearizable reads go on through the others; the member restarted on
// its data catches up and serves what was written while it was down.
func TestQuorumSurvivesAKill(t *testing.T) {
	c := etcdserver.Start(t, 3)
	cl := c.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := cl.Put(ctx, "k", "before"); err != nil {
		t.Fatal(err)
	}
	c.Kill(1)
	if _, err := cl.Put(ctx, "k", "during"); err != nil {
		t.Fatalf("put with one member down: %v", err)
	}
	c.Restart(1)
	one, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints()[1:2], DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	resp, err := one.Get(ctx, "k")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "during" {
		t.Fatalf("restarted member reads %v, %v; want during", resp, err)
	}
}
