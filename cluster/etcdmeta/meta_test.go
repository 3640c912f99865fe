package etcdmeta_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/etcdmeta"
	"github.com/kgateway/kgateway/cluster/etcdtest"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
	"github.com/kgateway/kgateway/tier/tiertest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// deadline bounds every wait for a condition.
const deadline = 60 * time.Second

// node opens an EtcdMeta on its own client (a node of its own), closed
// when the test ends.
func node(t *testing.T, s *etcdtest.Server, opts etcdmeta.Options) (*etcdmeta.EtcdMeta, *clientv3.Client) {
	t.Helper()
	c := s.Client(t)
	m := etcdmeta.New(c, opts)
	t.Cleanup(func() { m.Close() })
	return m, c
}

// TestConformance runs Meta's contract against EtcdMeta, with two
// clients as two nodes; each case gets an empty prefix of one etcd.
func TestConformance(t *testing.T) {
	s := etcdtest.Start(t)
	tiertest.MetaConformance(t, func(t *testing.T) (tier.Meta, tier.Meta) {
		opts := etcdmeta.Options{Prefix: "/conformance/" + t.Name() + "/"}
		a, _ := node(t, s, opts)
		b, _ := node(t, s, opts)
		return a, b
	})
}

func pinOf(key, id string) tier.Pin {
	return tier.Pin{Key: key, ID: id, Owner: "node-a", Expires: time.Now().Add(time.Hour).UnixNano()}
}

// waitPins waits until m lists want pins of key.
func waitPins(t *testing.T, m *etcdmeta.EtcdMeta, key string, want int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ps, err := m.Pins(key)
		if err == nil && len(ps) == want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pins of %s: %d (%v), want %d", key, len(ps), err, want)
		case <-tick.C:
		}
	}
}

// TestDeadNodePinsExpire: a node that dies without releasing its pins
// (its client closed, no revoke) leaves none behind once its pin lease's
// TTL passes: its reads can no longer hold up another node's deletion.
func TestDeadNodePinsExpire(t *testing.T) {
	s := etcdtest.Start(t)
	opts := etcdmeta.Options{Prefix: "/pins/", PinLeaseTTL: 2}
	a, ca := node(t, s, opts)
	b, _ := node(t, s, opts)
	if err := a.AddPin(pinOf("obj", "r1")); err != nil {
		t.Fatal(err)
	}
	waitPins(t, b, "obj", 1)
	ca.Close() // the node is gone: no keep-alive, no revoke
	waitPins(t, b, "obj", 0)
}

// TestPinLeaseReplaced: when the pin lease ends under a live node (here
// revoked by another client, as etcd does when the node was cut off past
// the TTL), its pins go and the next AddPin works on a fresh lease.
func TestPinLeaseReplaced(t *testing.T) {
	s := etcdtest.Start(t)
	opts := etcdmeta.Options{Prefix: "/pins/"}
	a, _ := node(t, s, opts)
	b, cb := node(t, s, opts)
	if err := a.AddPin(pinOf("obj", "r1")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	resp, err := cb.Get(ctx, "/pins/p/obj\x00r1")
	if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
		t.Fatalf("pin key: %v, %v: want one key under a lease", resp, err)
	}
	if _, err := cb.Revoke(ctx, clientv3.LeaseID(resp.Kvs[0].Lease)); err != nil {
		t.Fatal(err)
	}
	waitPins(t, b, "obj", 0)
	if err := a.AddPin(pinOf("obj", "r2")); err != nil {
		t.Fatalf("pin after the lease ended: %v", err)
	}
	waitPins(t, b, "obj", 1)
}

// TestCloseReleasesPins: Close revokes the pin lease at once and refuses
// further pins.
func TestCloseReleasesPins(t *testing.T) {
	s := etcdtest.Start(t)
	opts := etcdmeta.Options{Prefix: "/pins/"}
	a, _ := node(t, s, opts)
	b, _ := node(t, s, opts)
	for _, id := range []string{"r1", "r2"} {
		if err := a.AddPin(pinOf("obj", id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if ps, err := b.AllPins(); err != nil || len(ps) != 0 {
		t.Fatalf("pins after close: %v, %v", ps, err)
	}
	if err := a.AddPin(pinOf("obj", "r3")); !errors.Is(err, etcdmeta.ErrClosed) {
		t.Fatalf("pin after close: %v, want ErrClosed", err)
	}
}

// TestSurvivesEtcdRestart: while etcd is down a call fails within the
// timeout (Meta takes no context); records, versions and pins outlive the
// restart, and the same handle continues with its compare-and-swaps.
func TestSurvivesEtcdRestart(t *testing.T) {
	s := etcdtest.Start(t)
	a, _ := node(t, s, etcdmeta.Options{Prefix: "/restart/", Timeout: time.Second})
	o, err := a.Put(tiertest.SampleObject(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.AddPin(pinOf(o.Key, "r1")); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	if _, err := a.Get(1, 2); err == nil || errors.Is(err, tier.ErrNoObject) {
		t.Fatalf("get while etcd is down: %v, want an error", err)
	}
	s.Restart()
	// The client reconnects with gRPC's backoff, which may take longer
	// than one call's timeout: calls fail until it has, then succeed.
	var got tier.Object
	for deadline := time.Now().Add(30 * time.Second); ; {
		if got, err = a.Get(1, 2); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || got != o {
		t.Fatalf("after restart: %+v, %v; want %+v", got, err, o)
	}
	waitPins(t, a, o.Key, 1)
	o.State = tier.Published
	if _, err := a.Put(o); err != nil {
		t.Fatalf("put at the version from before the restart: %v", err)
	}
}

// TestKeysSmallAndFew: one key per object record and per pin, under the
// prefix, and nothing else.
func TestKeysSmallAndFew(t *testing.T) {
	s := etcdtest.Start(t)
	a, c := node(t, s, etcdmeta.Options{Prefix: "/few/"})
	for led := 0; led < 20; led++ {
		o, err := a.Put(tiertest.SampleObject(3, storage.LedgerID(led)))
		if err != nil {
			t.Fatal(err)
		}
		o.State = tier.Published
		if _, err := a.Put(o); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.AddPin(pinOf("obj", "r1")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	resp, err := c.Get(ctx, "", clientv3.WithFromKey(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var objs, pins int
	for _, kv := range resp.Kvs {
		k := string(kv.Key)
		switch {
		case strings.HasPrefix(k, "/few/o/"):
			objs++
		case strings.HasPrefix(k, "/few/p/"):
			pins++
		default:
			t.Errorf("key %q outside the keyspace", k)
		}
	}
	if objs != 20 || pins != 1 {
		t.Fatalf("%d object keys, %d pin keys; want 20 and 1", objs, pins)
	}
}
