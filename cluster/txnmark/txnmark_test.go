package txnmark

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/etcdtest"
	"github.com/kgateway/kgateway/cluster/owner"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/resolvertest"
	"github.com/twmb/franz-go/pkg/kmsg"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

const prefix = "/kg/"

// rig is one etcd, a resolver with topic "t" (one partition) standing
// for the partition's leader, and the owner managers of two nodes.
type rig struct {
	t *testing.T
	// markerTimeout is the relays' MarkerTimeout (default 10 s).
	markerTimeout time.Duration
	cli           *clientv3.Client
	res           *resolver.Resolver
	m             [2]*owner.Manager
}

func newRig(t *testing.T) *rig {
	e := etcdtest.Start(t)
	g := &rig{t: t, cli: e.Client(t), res: resolvertest.Open(t, resolver.Config{})}
	for i := range g.m {
		s, err := concurrency.NewSession(g.cli, concurrency.WithTTL(60))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		g.m[i] = owner.New(g.cli, s, string(rune('a'+i)), prefix)
	}
	if _, err := g.res.CreateTopic("t", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	return g
}

func (g *rig) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	g.t.Cleanup(cancel)
	return ctx
}

func (g *rig) acquire(i int, pkey string) owner.Ownership {
	g.t.Helper()
	o, err := g.m[i].Acquire(g.ctx(), pkey)
	if err != nil {
		g.t.Fatal(err)
	}
	return o
}

// servingAs is a Serving that reports t/0 served under *o when non-nil.
type servingAs struct {
	mu sync.Mutex
	o  *owner.Ownership
}

func (s *servingAs) set(o *owner.Ownership) {
	s.mu.Lock()
	s.o = o
	s.mu.Unlock()
}

func (s *servingAs) serving(topic string, partition int32) (owner.Ownership, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.o == nil || topic != "t" || partition != 0 {
		return owner.Ownership{}, false
	}
	return *s.o, true
}

// relay is node i's relay, started; it serves t/0 as sv says (nil:
// never).
func (g *rig) relay(i int, sv *servingAs) *Relay {
	var fn Serving = func(string, int32) (owner.Ownership, bool) { return owner.Ownership{}, false }
	if sv != nil {
		fn = sv.serving
	}
	r := New(g.cli, func() *owner.Manager { return g.m[i] }, prefix, g.res, fn,
		Options{MarkerTimeout: cmp.Or(g.markerTimeout, 10*time.Second), Retry: 50 * time.Millisecond})
	r.Start()
	g.t.Cleanup(r.Close)
	return r
}

// txnBatch is a one-record transactional batch of producer pid at epoch.
func txnBatch(pid int64, epoch int16, seq int32) []byte {
	r := kmsg.Record{Key: []byte("k"), Value: []byte("v")}
	r.Length = int32(len(r.AppendTo(nil)) - 1)
	b := kmsg.RecordBatch{Magic: 2, NumRecords: 1, Records: r.AppendTo(nil), PartitionLeaderEpoch: -1,
		Attributes: 0x10, ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq, FirstTimestamp: 1, MaxTimestamp: 1}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

func (g *rig) produce(pid int64, epoch int16, seq int32) error {
	_, err := g.res.Produce("t", 0, txnBatch(pid, epoch, seq))
	return err
}

func (g *rig) lso() resolver.Offset {
	_, _, lso, err := g.res.Bounds("t", 0)
	if err != nil {
		g.t.Fatal(err)
	}
	return lso
}

func (g *rig) records() int {
	resp, err := g.cli.Get(g.ctx(), prefix+"txn/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		g.t.Fatal(err)
	}
	return int(resp.Count)
}

// Verification across nodes: a batch the leader has no registration for is accepted once etcd
// shows the coordinator registered it at the batch's epoch, and only
// then; a decided transaction registers nothing.
func TestVerify(t *testing.T) {
	g := newRig(t)
	g.markerTimeout = time.Second
	co := g.relay(0, nil)
	co.SetCoordinator(g.acquire(0, "coordinator"))
	leader := g.relay(1, nil) // serves nothing: its watch applies nothing
	ctx := g.ctx()

	if ok, err := leader.Verify(ctx, "t", 0, 7, 0); ok || err != nil {
		t.Fatalf("Verify before any registration: %v %v", ok, err)
	}
	if err := co.AddTxnPartition("t", 0, 7, 0); err != nil {
		t.Fatal(err)
	}
	if err := g.produce(7, 0, 0); !errors.Is(err, resolver.ErrInvalidTxnState) {
		t.Fatalf("produce before Verify: %v, want ErrInvalidTxnState", err)
	}
	if ok, err := leader.Verify(ctx, "t", 0, 7, 1); ok || err != nil {
		t.Fatalf("Verify at another epoch: %v %v", ok, err)
	}
	if ok, err := leader.Verify(ctx, "t", 0, 7, 0); !ok || err != nil {
		t.Fatalf("Verify of the registration: %v %v", ok, err)
	}
	if err := g.produce(7, 0, 0); err != nil {
		t.Fatalf("produce after Verify: %v", err)
	}

	// Decided: Verify refuses (the marker is on its way).
	done := make(chan error, 1)
	go func() { done <- co.WriteTxnMarker("t", 0, 7, 0, true, 0) }()
	waitFor(t, "the decision in etcd", func() bool {
		resp, err := g.cli.Get(ctx, prefix+"txn/t/0/7")
		return err == nil && len(resp.Kvs) == 1 && string(resp.Kvs[0].Value) != `{"epoch":0}`
	})
	if ok, err := leader.Verify(ctx, "t", 0, 7, 0); ok || err != nil {
		t.Fatalf("Verify of a decided transaction: %v %v", ok, err)
	}
	if err := <-done; err == nil {
		t.Fatal("WriteTxnMarker returned nil: nobody serves t/0 here")
	}
}

// Coordinator-fenced records: a coordinator whose ownership was taken writes nothing.
func TestFencedCoordinatorWritesNothing(t *testing.T) {
	g := newRig(t)
	co := g.relay(0, nil)
	if err := co.AddTxnPartition("t", 0, 7, 0); !errors.Is(err, ErrNotCoordinator) {
		t.Fatalf("without a coordinator ownership: %v", err)
	}
	o := g.acquire(0, "coordinator")
	co.SetCoordinator(o)
	if err := g.m[0].Release(g.ctx(), o); err != nil {
		t.Fatal(err)
	}
	g.acquire(1, "coordinator")
	if err := co.AddTxnPartition("t", 0, 7, 0); !errors.Is(err, owner.ErrFenced) {
		t.Fatalf("fenced AddTxnPartition: %v", err)
	}
	if err := co.WriteTxnMarker("t", 0, 7, 0, true, 0); !errors.Is(err, owner.ErrFenced) {
		t.Fatalf("fenced WriteTxnMarker: %v", err)
	}
	if n := g.records(); n != 0 {
		t.Fatalf("a fenced coordinator left %d records", n)
	}
}

// Leader-applied records: the leader applies the registration and, once decided, writes the
// marker durably and deletes the record; WriteTxnMarker returns only
// then. A partition nobody serves keeps its decision until a leader does.
func TestMarkerReachesLeader(t *testing.T) {
	g := newRig(t)
	co := g.relay(0, nil)
	co.SetCoordinator(g.acquire(0, "coordinator"))
	sv := &servingAs{}
	g.relay(1, sv)

	if err := co.AddTxnPartition("t", 0, 9, 0); err != nil {
		t.Fatal(err)
	}
	o := g.acquire(1, "p")
	sv.set(&o) // now served: the registration is applied by the watch
	waitFor(t, "the registration applied", func() bool { return g.produce(9, 0, 0) == nil })
	if lso := g.lso(); lso != 0 {
		t.Fatalf("LSO %d with the transaction open, want 0", lso)
	}
	sv.set(nil) // nobody serves it for a while
	done := make(chan error, 1)
	go func() { done <- co.WriteTxnMarker("t", 0, 9, 0, true, 0) }()
	select {
	case err := <-done:
		t.Fatalf("WriteTxnMarker returned %v with no leader", err)
	case <-time.After(300 * time.Millisecond):
	}
	sv.set(&o)
	if err := <-done; err != nil {
		t.Fatalf("WriteTxnMarker: %v", err)
	}
	if lso := g.lso(); lso != 2 {
		t.Fatalf("LSO %d after the marker, want 2", lso)
	}
	if n := g.records(); n != 0 {
		t.Fatalf("%d records left after the marker", n)
	}
}

// Leader-applied records: a node that lost the partition's ownership deletes no decision,
// even when its (stale) local copy finds nothing to mark.
func TestStaleLeaderDeletesNothing(t *testing.T) {
	g := newRig(t)
	co := g.relay(0, nil)
	co.SetCoordinator(g.acquire(0, "coordinator"))
	old := g.acquire(1, "p")
	if err := g.m[1].Release(g.ctx(), old); err != nil {
		t.Fatal(err)
	}
	g.acquire(0, "p") // another node leads it now
	sv := &servingAs{}
	sv.set(&old) // but this one has not noticed
	g.relay(1, sv)
	done := make(chan error, 1)
	go func() { done <- co.WriteTxnMarker("t", 0, 11, 0, false, 0) }()
	select {
	case err := <-done:
		t.Fatalf("WriteTxnMarker returned %v: a stale leader deleted the decision", err)
	case <-time.After(time.Second):
	}
	if n := g.records(); n != 1 {
		t.Fatalf("%d records, want the decision kept", n)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
