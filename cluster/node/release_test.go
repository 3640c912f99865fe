package node

import (
	"context"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/etcdtest"
)

// TestFailedReleaseIsRetried: a release that fails (etcd unreachable, or
// its outcome unknown) leaves the owner record naming this node, so no
// other node may take the partition. The node keeps the ownership as
// broken and not serving, and the next round's placement releases it
// again; the record is then gone.
func TestFailedReleaseIsRetried(t *testing.T) {
	e := etcdtest.Start(t)
	n, err := Open(Config{NodeID: 1, Endpoints: []string{e.Endpoint()}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const pkey = "t-0"
	o, err := n.Owners().Acquire(ctx, pkey)
	if err != nil {
		t.Fatal(err)
	}
	h := &held{pkey: pkey, o: o, serving: true}
	n.mu.Lock()
	n.mu.held[pkey] = h
	n.mu.Unlock()

	e.Stop()
	n.release(ctx, h) // fails: etcd is down
	e.Restart()

	n.mu.Lock()
	kept := n.mu.held[pkey]
	n.mu.Unlock()
	if kept != h || !h.broken || h.serving {
		t.Fatalf("after a failed release: held %v (broken %v, serving %v), want the ownership kept as broken, not serving", kept, h.broken, h.serving)
	}
	// What the next round decides for it, whoever is preferred.
	p := place(placeView{self: 1, name: "1", live: []int32{1, 2}, slots: []string{pkey},
		held: map[string]heldView{pkey: {broken: true}}, owners: map[string]string{pkey: "1"}})
	if len(p.release) != 1 || p.release[0].pkey != pkey {
		t.Fatalf("placement after a failed release: %+v, want it released", p)
	}
	n.releaseKey(pkey)
	node, _, err := n.Owners().Owner(ctx, pkey)
	if err != nil {
		t.Fatal(err)
	}
	if node != "" {
		t.Fatalf("owner record still names node %q after the retried release", node)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mu.held[pkey] != nil {
		t.Fatal("ownership still held after the retried release")
	}
}
