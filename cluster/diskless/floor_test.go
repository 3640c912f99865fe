package diskless

import (
	"bytes"
	"errors"
	"testing"
)

// TestFlooredReadKeepsObjects (floored reads): a node's read of
// published ranges under its floor writes no pin record, yet while it is
// in flight no Collect deletes the objects it reads: here, during node
// b's read, node a merges the ranges being read (their objects are
// unreferenced from then on) and collects, b advances its floor (which
// must stay at the read's revision) and a collects again; nothing goes,
// and the read returns the published bytes. Once the read is over and
// b's floor advanced, Collect takes the objects. A range listed before
// the merge is refused (ErrStale), no pin written.
func TestFlooredReadKeepsObjects(t *testing.T) {
	e := newEnv(t, "")
	a, b := e.node("a"), e.node("b")
	owns := a.acquire(t, "p")
	commitRounds(t, a.c, owns, []string{"p"}, 4)
	ctx := ctxT(t)
	_, _, ranges, err := a.c.Log(ctx, "p")
	if err != nil || len(ranges) != 4 {
		t.Fatalf("log: %d ranges, %v", len(ranges), err)
	}
	var want [][]byte
	for _, r := range ranges[1:3] {
		data, err := a.c.ReadRange(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, data)
	}
	lease := b.sess.Lease()
	during := 0
	b.c.afterFloorRegister = func() {
		during++
		if m, err := a.c.Merge(ctx, owns["p"], "p"); err != nil || m != 4 {
			t.Fatalf("merge during the read: %d, %v", m, err)
		}
		if got, err := a.c.Collect(ctx); err != nil || got != 0 {
			t.Fatalf("collect during a floored read: deleted %d, %v; want none", got, err)
		}
		if err := b.c.AdvanceFloor(ctx, lease); err != nil {
			t.Fatal(err)
		}
		if got, err := a.c.Collect(ctx); err != nil || got != 0 {
			t.Fatalf("collect after the reader advanced its floor during its read: deleted %d, %v; want none", got, err)
		}
	}
	got, err := b.c.ReadFloored(ctx, lease, ranges[1:3]...)
	if err != nil || during != 1 {
		t.Fatalf("floored read: %v (registered %d times)", err, during)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("range %d read other bytes than published", i)
		}
	}
	b.c.afterFloorRegister = nil
	if n := e.keys(t, "pin/"); n != 0 {
		t.Fatalf("a floored read left %d pin records, want none", n)
	}
	if n := e.keys(t, floorDir); n != 1 {
		t.Fatalf("%d floor records, want b's one", n)
	}
	if _, err := b.c.ReadFloored(ctx, lease, ranges[0]); !errors.Is(err, ErrStale) {
		t.Fatalf("floored read of a range merged since listed: %v, want ErrStale", err)
	}
	if err := b.c.AdvanceFloor(ctx, lease); err != nil {
		t.Fatal(err)
	}
	if got, err := a.c.Collect(ctx); err != nil || got != 4 {
		t.Fatalf("collect once the read is over and the floor advanced: %d, %v; want the 4 merged", got, err)
	}
	if left := e.objects(t, commitsDir); len(left) != 0 {
		t.Fatalf("objects left %v", left)
	}
}

// TestFlooredReadNeedsItsRecord (floored reads): a read is floored only
// while the node's floor record under the lease it reads with exists, in
// the very read that revalidates its ranges. Once the lease ended (the
// record went with it), a read is not registered under a floor Collect
// no longer sees: it falls back to pins, which fail under an ended
// lease, and nothing is read. Two sessions of one node name keep two
// records.
func TestFlooredReadNeedsItsRecord(t *testing.T) {
	e := newEnv(t, "")
	a := e.node("a")
	owns := a.acquire(t, "p")
	commitRounds(t, a.c, owns, []string{"p"}, 2)
	ctx := ctxT(t)
	_, _, ranges, err := a.c.Log(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	old, next := e.node("b"), e.node("b")
	floored := 0
	old.c.afterFloorRegister = func() { floored++ }
	for _, n := range []*node{old, next} {
		if _, err := n.c.ReadFloored(ctx, n.sess.Lease(), ranges...); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.keys(t, floorDir+"b/"); floored != 1 || n != 2 {
		t.Fatalf("floored %d reads, %d floor records; want 1 and one per session", floored, n)
	}
	// Once the floor is there, a read costs etcd one read-only
	// transaction and no write (a pinned read: two writes).
	before := old.c.Requests()
	if _, err := old.c.ReadFloored(ctx, old.sess.Lease(), ranges...); err != nil || floored != 2 {
		t.Fatalf("second read: %v, floored %d", err, floored)
	}
	if got := old.c.Requests(); got.EtcdTxns != before.EtcdTxns || got.EtcdReads != before.EtcdReads+1 {
		t.Fatalf("a floored read cost %d etcd transactions and %d reads, want 0 and 1",
			got.EtcdTxns-before.EtcdTxns, got.EtcdReads-before.EtcdReads)
	}
	if _, err := e.cli.Revoke(ctx, old.sess.Lease()); err != nil {
		t.Fatal(err)
	}
	if _, err := old.c.ReadFloored(ctx, old.sess.Lease(), ranges...); err == nil || floored != 2 {
		t.Fatalf("read under an ended lease: %v, floored %d reads; want an error and no floored read", err, floored)
	}
	if n := e.keys(t, floorDir+"b/"); n != 1 {
		t.Fatalf("%d floor records of b after its first session ended, want the second's", n)
	}
}
