package diskless

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/owner"
)

// pairGate holds the first of every two PUTs (afterPut) until the second
// returned, so that both commits of a pair are ready to publish at once.
type pairGate struct {
	mu      sync.Mutex
	waiting chan struct{} // non-nil: the first of a pair is held on it
}

func (g *pairGate) afterPut(string) {
	g.mu.Lock()
	if g.waiting != nil {
		close(g.waiting)
		g.waiting = nil
		g.mu.Unlock()
		return
	}
	w := make(chan struct{})
	g.waiting = w
	g.mu.Unlock()
	select {
	case <-w:
	case <-time.After(30 * time.Second):
	}
}

// TestPipelinePublishesInOrder (in-order publication, acknowledgement after PUT and commit, ranges tiling the log): commits of one partition
// begun back to back, each before the one before it was published, are
// all published, in the order they were begun, whichever PUT ends first:
// every one's result is nil and the ranges tile the partition.
func TestPipelinePublishesInOrder(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	owns := n.acquire(t, "p", "q")
	g := &pairGate{}
	n.c.afterPut = g.afterPut
	next, nextQ := int64(0), int64(0)
	const pairs = 20
	for range pairs {
		var fs []*Flight
		for i := range 2 {
			bs := []Batch{batch("p", next, 2)}
			if i == 1 {
				bs = append(bs, batch("q", nextQ, 1))
				nextQ++
			}
			next += 2
			fs = append(fs, n.c.Begin(ctxT(t), bs, owns))
		}
		allOK(t, fs[0].Wait())
		allOK(t, fs[1].Wait())
	}
	_, end, got, ranges := e.readAll(t, n.c, "p")
	if end != next || len(got) != 2*pairs || len(ranges) != 2*pairs {
		t.Fatalf("p published to %d in %d batches, %d ranges; want %d, %d", end, len(got), len(ranges), next, 2*pairs)
	}
}

// TestPipelineNothingAfterUnpublished (in-order publication): a commit begun while the
// one before it is in flight does not publish a partition that one
// carried and did not publish; its other partitions are published.
func TestPipelineNothingAfterUnpublished(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	owns := n.acquire(t, "p", "q")
	g := &pairGate{}
	n.c.afterPut = g.afterPut
	// The first starts at 5 of a partition whose end is 0: refused.
	a := n.c.Begin(ctxT(t), []Batch{batch("p", 5, 2)}, owns)
	b := n.c.Begin(ctxT(t), []Batch{batch("p", 7, 1), batch("q", 0, 1)}, owns)
	if err := a.Wait()["p"]; !errors.Is(err, ErrEndMismatch) {
		t.Fatalf("first commit of p: %v, want ErrEndMismatch", err)
	}
	res := b.Wait()
	if !errors.Is(res["p"], ErrPredecessor) || res["q"] != nil {
		t.Fatalf("second commit: %v, want p refused (ErrPredecessor), q published", res)
	}
	// Once the outcome is known, a new commit is not refused for it.
	n.c.afterPut = nil
	allOK(t, n.c.Commit(ctxT(t), []Batch{batch("p", 0, 1)}, owns))
}

// TestPipelineFencedBeforeIsFenced (in-order publication, fenced writers publish nothing): a commit
// begun while the one before it is in flight, whose partition that one
// finds fenced (the ownership moved to another node meanwhile), is refused
// as fenced too, not only as ErrPredecessor: the node answers both
// produces NOT_LEADER_OR_FOLLOWER, so that the client looks for the new
// leader, where a storage error would be retried on the fenced node.
func TestPipelineFencedBeforeIsFenced(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	owns := n.acquire(t, "p", "q")
	allOK(t, n.c.Commit(ctxT(t), []Batch{batch("p", 0, 1)}, owns))
	if err := n.m.Release(ctxT(t), owns["p"]); err != nil {
		t.Fatal(err)
	}
	other := e.node("b")
	other.acquire(t, "p")
	g := &pairGate{}
	n.c.afterPut = g.afterPut
	a := n.c.Begin(ctxT(t), []Batch{batch("p", 1, 2)}, owns)
	b := n.c.Begin(ctxT(t), []Batch{batch("p", 3, 1), batch("q", 0, 1)}, owns)
	if err := a.Wait()["p"]; !errors.Is(err, owner.ErrFenced) {
		t.Fatalf("first commit of p: %v, want fenced", err)
	}
	res := b.Wait()
	if !errors.Is(res["p"], ErrPredecessor) || !errors.Is(res["p"], owner.ErrFenced) || res["q"] != nil {
		t.Fatalf("second commit: %v, want p refused as fenced (and ErrPredecessor), q published", res)
	}
}

// TestPipelineCoalescesPublication (coalesced publication, acknowledgement after PUT and commit, ranges tiling the log): a commit whose PUT
// returned before the commit begun just before it publishes is published
// in that commit's transaction: one transaction for both, each result
// nil only once its own ranges are published, and both objects counted.
// The second carries a partition of the first (its range follows in the
// same transaction) and one of its own.
func TestPipelineCoalescesPublication(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	owns := n.acquire(t, "p", "q")
	g := &pairGate{}
	n.c.afterPut = g.afterPut
	const pairs = 5
	next := int64(0)
	for i := range int64(pairs) {
		before := n.c.Requests().EtcdTxns
		a := n.c.Begin(ctxT(t), []Batch{batch("p", next, 2)}, owns)
		b := n.c.Begin(ctxT(t), []Batch{batch("p", next+2, 1), batch("q", i, 1)}, owns)
		next += 3
		allOK(t, a.Wait())
		allOK(t, b.Wait())
		if txns := n.c.Requests().EtcdTxns - before; txns != 1 {
			t.Fatalf("pair %d: %d transactions, want 1 (coalesced publication)", i, txns)
		}
	}
	n.c.afterPut = nil
	_, end, got, ranges := e.readAll(t, n.c, "p")
	if end != next || len(got) != 2*pairs || len(ranges) != 2*pairs {
		t.Fatalf("p published to %d in %d batches, %d ranges; want %d, %d", end, len(got), len(ranges), next, 2*pairs)
	}
	_, endQ, _, _ := e.readAll(t, n.c, "q")
	if endQ != pairs {
		t.Fatalf("q published to %d, want %d", endQ, pairs)
	}
	// Each object counts the ranges naming it (reference-counted collection): one in the
	// first of a pair, two in the second.
	objs := e.objects(t, commitsDir)
	st, err := n.c.readObjects(ctxT(t), objs, 0)
	if err != nil {
		t.Fatal(err)
	}
	refs := int64(0)
	for _, o := range objs {
		refs += st[o].Refs
	}
	if len(objs) != 2*pairs || refs != 3*pairs {
		t.Fatalf("%d objects counting %d references, want %d and %d", len(objs), refs, 2*pairs, 3*pairs)
	}
}
