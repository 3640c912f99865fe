package authstore

import (
	"context"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/etcdtest"
	"go.uber.org/zap"
)

// Credentials and ACLs shared in etcd: a copy whose watch starts at a compacted revision (as after a long
// disconnection) reloads the key and follows it from there.
func TestReloadAfterCompaction(t *testing.T) {
	srv := etcdtest.Start(t)
	cli := srv.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	key := ScramKey(prefix)
	first, err := cli.Put(ctx, key, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, key, "v1.5"); err != nil {
		t.Fatal(err)
	}
	last, err := cli.Put(ctx, key, "v2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(ctx, last.Header.Revision); err != nil {
		t.Fatal(err)
	}
	// A copy at v1 whose watch continues after v1: that history (v1.5) is
	// gone, only v2 is left.
	d := &Doc{cli: cli, key: key, log: zap.NewNop(), done: make(chan struct{}),
		opts: Options{Timeout: 5 * time.Second, RetryInterval: 10 * time.Millisecond}}
	d.cur.Store(&state{val: []byte("v1"), rev: first.Header.Revision})
	wctx, stop := context.WithCancel(context.Background())
	d.stop = stop
	go d.run(wctx, first.Header.Revision)
	defer d.Close()
	waitVal := func(want string) {
		t.Helper()
		for {
			if v, _ := d.Load(); string(v) == want {
				return
			}
			if ctx.Err() != nil {
				v, rev := d.Load()
				t.Fatalf("copy %q at %d, want %q", v, rev, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitVal("v2")
	if _, err := cli.Put(ctx, key, "v3"); err != nil {
		t.Fatal(err)
	}
	waitVal("v3")
}

// Credentials and ACLs shared in etcd: an update that changes nothing writes nothing.
func TestUnchangedNotWritten(t *testing.T) {
	srv := etcdtest.Start(t)
	d := open(t, srv, ACLKey(prefix), Options{})
	same := func([]byte) ([]byte, error) { return []byte("doc"), nil }
	if err := d.Update(same); err != nil {
		t.Fatal(err)
	}
	_, rev := d.Load()
	if err := d.Update(same); err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client(t).Get(context.Background(), ACLKey(prefix))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Kvs[0].ModRevision; got != rev {
		t.Fatalf("mod revision %d after an update that changed nothing, want %d", got, rev)
	}
}
