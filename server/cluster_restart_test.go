package server

import (
	"context"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/node"
	"github.com/kgateway/kgateway/kafka"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"gocloud.dev/blob"
)

// killNode stops node id the way kill -9 does as far as etcd can tell:
// its etcd client closes without deregistering or releasing anything, so
// its registration and ownerships stay under a lease nobody renews until
// cluster.session.timeout.ms. The dead server is closed when the test
// ends; its next start uses a fresh data directory.
func (c *testCluster) killNode(id int32) {
	c.t.Helper()
	c.mu.Lock()
	s := c.nodes[id]
	delete(c.nodes, id)
	c.mu.Unlock()
	s.cluster.node.Client().Close()
	delete(c.dirs, id)
	c.t.Cleanup(func() { s.Close() })
}

// TestClusterRestartAfterKillTakesIdBack: a node started again at once
// under the id of a killed one, whose session (60 s) has not expired,
// takes the id over (one registration per node id): it revokes the dead incarnation's lease, which
// frees its ownerships, becomes ready and owns the partitions — it neither
// waits for the old lease to expire nor hangs.
func TestClusterRestartAfterKillTakesIdBack(t *testing.T) {
	long := func(cfg *Config) { cfg.Cluster.SessionTimeout = time.Minute }
	c, _, adm, ctx := startWithTopic(t, 1, "k", 4, long)
	c.waitLeaders(adm, "k", 4)
	etcd := c.etcd.Client(t)
	reg, err := etcd.Get(ctx, node.DefaultPrefix+"nodes/1")
	if err != nil || len(reg.Kvs) != 1 {
		t.Fatalf("registration of node 1: %v %v", reg, err)
	}
	oldLease := clientv3.LeaseID(reg.Kvs[0].Lease)
	c.killNode(1)

	started := make(chan struct{})
	go func() {
		defer close(started)
		c.start(1)
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second): // the old lease lives 60 s
		t.Fatal("node 1 did not start again within 30 s of being killed (its old registration lives 60 s)")
	}
	ttl, err := etcd.TimeToLive(ctx, oldLease)
	if err != nil {
		t.Fatal(err)
	}
	if ttl.TTL != -1 {
		t.Errorf("the killed incarnation's lease %x still lives (TTL %d s): not fenced", oldLease, ttl.TTL)
	}
	cl := c.client(kgo.DefaultProduceTopic("k"))
	leaders := c.waitLeaders(kadm.NewClient(cl), "k", 4)
	for p, l := range leaders {
		if l != 1 {
			t.Errorf("partition %d led by %d", p, l)
		}
	}
	owners, err := etcd.Get(ctx, node.DefaultPrefix+"owner/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range owners.Kvs {
		if clientv3.LeaseID(kv.Lease) == oldLease {
			t.Errorf("%s still owned under the killed incarnation's lease", kv.Key)
		}
	}
	want := produceN(t, ctx, cl, "k", 20)
	checkConsumed(t, c, "k", want)
}

// TestClusterFailedStartCloses: a node whose registration fails (here
// its etcd client is gone) returns the error from Start, and Close then
// returns instead of waiting for loops that never started.
func TestClusterFailedStartCloses(t *testing.T) {
	c := newTestCluster(t)
	n, err := node.Open(node.Config{NodeID: 7, Endpoints: []string{c.etcd.Endpoint()}, SessionTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	n.Client().Close()
	if err := n.Start(kafka.Broker{Host: "127.0.0.1", Port: 9}, node.Parts{}); err == nil {
		t.Fatal("Start succeeded without etcd")
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		n.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	select {
	case <-closed:
	case <-ctx.Done():
		t.Fatal("Close after a failed Start did not return")
	}
}

// TestClusterLeaveStopsBlockedMerge: a graceful stop does not wait for
// a background merge stuck in an object-store read: Leave cancels the
// context every background call derives from, so the read (which gives
// up only when its context ends, like the S3 SDK's) returns at once,
// where it used to hold the stop for its 30 s timeout.
func TestClusterLeaveStopsBlockedMerge(t *testing.T) {
	var bb *blockingBucket
	wrap := func(cfg *Config) {
		cfg.wrapBucket = func(inner *blob.Bucket) *blob.Bucket {
			var b *blob.Bucket
			bb, b = newBlockingBucket(inner)
			return b
		}
	}
	c, cl, adm, ctx := startWithTopic(t, 1, "b", 1, wrap)
	c.waitLeaders(adm, "b", 1)
	bb.block.Store(true)
	produceN(t, ctx, cl, "b", 20) // one group commit each: small ranges to merge
	for bb.blocked.Load() == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("no merge read the object store")
		case <-time.After(20 * time.Millisecond):
		}
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		c.stop(1)
	}()
	select {
	case <-stopped:
	case <-time.After(15 * time.Second): // the merge's own timeout is 30 s
		t.Fatal("graceful stop still waiting 15 s after it began, behind a blocked merge read")
	}
	if n := bb.blocked.Load(); n != 0 {
		t.Errorf("%d object-store reads still blocked after the stop", n)
	}
}

// TestClusterReplacedNodeDoesNotTakeIdBack: the incarnation a new start
// under its id fenced (here still alive) renews its session but does not
// take the id back from the newer one (one registration per node id): two processes sharing an id
// never take it from each other in turn.
func TestClusterReplacedNodeDoesNotTakeIdBack(t *testing.T) {
	c := newTestCluster(t)
	core, logs := observer.New(zap.DebugLevel)
	c.edit = func(cfg *Config) { cfg.Logger = zap.New(core) }
	old := c.start(1)
	c.edit = nil
	c.mu.Lock()
	delete(c.nodes, 1) // the next start(1) is the new incarnation, in its own directory
	c.mu.Unlock()
	delete(c.dirs, 1)
	t.Cleanup(func() { old.Close() })
	c.start(1)
	ctx := testCtx(t)
	etcd := c.etcd.Client(t)
	reg, err := etcd.Get(ctx, node.DefaultPrefix+"nodes/1")
	if err != nil || len(reg.Kvs) != 1 {
		t.Fatalf("registration of node 1: %v %v", reg, err)
	}
	newLease := reg.Kvs[0].Lease
	refused := func() int {
		return logs.FilterMessage("cluster-register-failed").Len() + logs.FilterMessage("cluster-register-retry").Len()
	}
	// Until the old one has been refused three times (it tries, and
	// tries again), the registration stays the new one's.
	for refused() < 3 {
		reg, err := etcd.Get(ctx, node.DefaultPrefix+"nodes/1")
		if err != nil {
			t.Fatal(err)
		}
		if len(reg.Kvs) != 1 || reg.Kvs[0].Lease != newLease {
			t.Fatalf("the replaced node took the id back: registration %v, want under lease %x", reg.Kvs, newLease)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the replaced node made %d registration attempts, want 3", refused())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
