package txnmark

import (
	"cmp"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/owner"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// WriteTxnMarkers: one decision transaction for all of a transaction's
// partitions, and direct markers on the partitions the coordinator leads.

// relayWith is node i's relay, started, over parts (nil: the rig's
// resolver), serving what serving reports, with etcd's max-txn-ops at
// maxOps (0: the default).
func (g *rig) relayWith(i int, parts Partitions, serving Serving, maxOps int) *Relay {
	if parts == nil {
		parts = g.res
	}
	r := New(g.cli, func() *owner.Manager { return g.m[i] }, prefix, parts, serving,
		Options{MarkerTimeout: cmp.Or(g.markerTimeout, 10*time.Second), Retry: 50 * time.Millisecond, MaxTxnOps: maxOps})
	r.Start()
	g.t.Cleanup(r.Close)
	return r
}

// servesTopic is a Serving of every partition of topic under o.
func servesTopic(topic string, o owner.Ownership) Serving {
	return func(t string, _ int32) (owner.Ownership, bool) { return o, t == topic }
}

// decisionRevisions watches the records from rev on until n decisions
// were written and returns how many were written at each revision.
func (g *rig) decisionRevisions(wc clientv3.WatchChan, n int) map[int64]int {
	g.t.Helper()
	revs := map[int64]int{}
	deadline := time.After(30 * time.Second)
	for seen := 0; seen < n; {
		select {
		case wr := <-wc:
			for _, ev := range wr.Events {
				if ev.Type == mvccpb.PUT && string(ev.Kv.Value) != `{"epoch":0}` {
					revs[ev.Kv.ModRevision]++
					seen++
				}
			}
		case <-deadline:
			g.t.Fatalf("saw %d decisions of %d", len(revs), n)
		}
	}
	return revs
}

// One decision transaction: the decisions of a transaction's five
// partitions, led by another node, are written in one etcd transaction,
// or in as few as etcd's max-txn-ops allows; every marker is written.
func TestDecisionsInOneTransaction(t *testing.T) {
	for _, tc := range []struct {
		maxOps int
		want   []int // decisions per transaction
	}{{0, []int{5}}, {2, []int{2, 2, 1}}} {
		g := newRig(t)
		if _, err := g.res.CreateTopic("m", 5, 1, nil, false); err != nil {
			t.Fatal(err)
		}
		co := g.relayWith(0, nil, servesTopic("none", owner.Ownership{}), tc.maxOps)
		co.SetCoordinator(g.acquire(0, "coordinator"))
		g.relayWith(1, nil, servesTopic("m", g.acquire(1, "m")), 0)
		var parts []Partition
		for p := range int32(5) {
			parts = append(parts, Partition{"m", p})
			if err := co.AddTxnPartition("m", p, 7, 0); err != nil {
				t.Fatal(err)
			}
		}
		now, err := g.cli.Get(g.ctx(), prefix)
		if err != nil {
			t.Fatal(err)
		}
		wc := g.cli.Watch(g.ctx(), prefix+"txn/", clientv3.WithPrefix(), clientv3.WithRev(now.Header.Revision+1))
		for i, err := range co.WriteTxnMarkers(7, 0, true, parts) {
			if err != nil {
				t.Fatalf("marker on m/%d: %v", i, err)
			}
		}
		revs := g.decisionRevisions(wc, 5)
		if len(revs) != len(tc.want) {
			t.Fatalf("max-txn-ops %d: decisions written in %d transactions %v, want %d", tc.maxOps, len(revs), revs, len(tc.want))
		}
		for _, n := range revs {
			if tc.maxOps > 0 && n > tc.maxOps {
				t.Fatalf("a transaction of %d decisions over max-txn-ops %d", n, tc.maxOps)
			}
		}
		if n := g.records(); n != 0 {
			t.Fatalf("%d records left after the markers", n)
		}
	}
}

// Direct markers, coordinator-fenced: a coordinator that lost the role
// writes no marker on a partition it leads itself, and deletes nothing;
// its successor completes the transaction through the record, applied
// by the same leader.
func TestDirectMarkerFencedCoordinatorWritesNothing(t *testing.T) {
	g := newRig(t)
	co := g.relayWith(0, nil, servesTopic("t", g.acquire(0, "t-0")), 0)
	own := g.acquire(0, "coordinator")
	co.SetCoordinator(own)
	if err := co.AddTxnPartition("t", 0, 7, 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the registration applied", func() bool { return g.produce(7, 0, 0) == nil })
	if err := g.m[0].Release(g.ctx(), own); err != nil {
		t.Fatal(err)
	}
	next := g.relayWith(1, nil, servesTopic("none", owner.Ownership{}), 0)
	next.SetCoordinator(g.acquire(1, "coordinator"))

	if err := co.WriteTxnMarkers(7, 0, true, []Partition{{"t", 0}})[0]; !errors.Is(err, owner.ErrFenced) {
		t.Fatalf("fenced WriteTxnMarkers: %v", err)
	}
	if lso := g.lso(); lso != 0 {
		t.Fatalf("LSO %d: a fenced coordinator wrote the marker", lso)
	}
	if n := g.records(); n != 1 {
		t.Fatalf("%d records, want the registration kept", n)
	}
	if err := next.WriteTxnMarker("t", 0, 7, 0, true, 0); err != nil {
		t.Fatalf("the successor's marker: %v", err)
	}
	if lso := g.lso(); lso != 2 {
		t.Fatalf("LSO %d after the successor's marker, want 2", lso)
	}
}

// gatedParts holds each marker until WriteTxnMarkers returned or a
// while passed, and tells whether WriteTxnMarkers returned first.
type gatedParts struct {
	Partitions
	returned chan struct{}
	mu       sync.Mutex
	calls    int
	early    bool
}

func (p *gatedParts) WriteTxnMarker(topic string, partition int32, pid int64, epoch int16, commit bool, ce int32) error {
	early := false
	select {
	case <-p.returned:
		early = true
	case <-time.After(300 * time.Millisecond): // time given to a relay that does not wait
	}
	err := p.Partitions.WriteTxnMarker(topic, partition, pid, epoch, commit, ce)
	p.mu.Lock()
	p.calls++
	p.early = p.early || early
	p.mu.Unlock()
	return err
}

// Direct markers: on a partition the coordinator leads, the marker is
// written here, with no decision record in etcd, and WriteTxnMarkers
// returns only once it is durable (the resolver returned); the
// registration record is gone.
func TestDirectMarkerDurableBeforeReturn(t *testing.T) {
	g := newRig(t)
	parts := &gatedParts{Partitions: g.res, returned: make(chan struct{})}
	co := g.relayWith(0, parts, servesTopic("t", g.acquire(0, "t-0")), 0)
	co.SetCoordinator(g.acquire(0, "coordinator"))
	if err := co.AddTxnPartition("t", 0, 7, 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the registration applied", func() bool { return g.produce(7, 0, 0) == nil })
	now, err := g.cli.Get(g.ctx(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	err = co.WriteTxnMarkers(7, 0, true, []Partition{{"t", 0}})[0]
	close(parts.returned)
	if err != nil {
		t.Fatalf("WriteTxnMarkers: %v", err)
	}
	parts.mu.Lock()
	calls, early := parts.calls, parts.early
	parts.mu.Unlock()
	if calls != 1 || early {
		t.Fatalf("%d markers written here, returned before one was durable: %v", calls, early)
	}
	if lso := g.lso(); lso != 2 {
		t.Fatalf("LSO %d after the marker, want 2", lso)
	}
	if n := g.records(); n != 0 {
		t.Fatalf("%d records left after the marker", n)
	}
	end, err := g.cli.Get(g.ctx(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	for rev := now.Header.Revision + 1; rev <= end.Header.Revision; rev++ {
		at, err := g.cli.Get(g.ctx(), prefix+"txn/t/0/7", clientv3.WithRev(rev))
		if err != nil {
			t.Fatal(err)
		}
		if len(at.Kvs) > 0 && string(at.Kvs[0].Value) != `{"epoch":0}` {
			t.Fatalf("a decision record was written for a partition led here: %s", at.Kvs[0].Value)
		}
	}
}
