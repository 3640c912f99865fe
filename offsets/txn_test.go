package offsets

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

func sampleTxn(id string) Txn {
	return Txn{ID: id, ProducerID: 7, LastProducerID: -1, Epoch: 3, LastEpoch: 2, State: TxnOngoing,
		Timeout: time.Minute, Partitions: []TopicPartition{tp("a", 0), tp("b\x00", 2)}, Groups: []string{"g1", "g\xff"},
		StartTime: time.UnixMilli(1000), UpdateTime: time.UnixMilli(2000), NextProducerID: -1}
}

// O4: transaction records survive a reopen exactly.
func TestTxnRecordRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	want := []Txn{sampleTxn("t1"), {ID: "t2", LastProducerID: -1, LastEpoch: -1, State: TxnCompleteAbort,
		StartTime: time.UnixMilli(0), UpdateTime: time.UnixMilli(5), NextProducerID: -1},
		// transaction version 2 with a pending producer id rotation (KIP-890 implicit adds)
		{ID: "t3", ProducerID: 9, LastProducerID: -1, Epoch: 32766, LastEpoch: 32765, State: TxnPrepareCommit,
			StartTime: time.UnixMilli(0), UpdateTime: time.UnixMilli(5), Version: 2, NextProducerID: 10}}
	for _, x := range want {
		if err := s.PutTxn(x); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s = open(t, dir, Options{})
	got, err := s.Txns()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("txns:\n got %+v\nwant %+v", got, want)
	}
	if err := s.DeleteTxn(want[1]); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Txns(); len(got) != 2 || got[0].ID != "t1" || got[1].ID != "t3" {
		t.Fatalf("after delete: %+v", got)
	}
}

// O5, O6, O7: pending offsets are invisible until commit, move on commit,
// vanish on abort, and only the ending transaction's offsets move.
func TestPendingOffsetsCommitAndAbort(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	mustCommit(t, s, "g", commit("a", 0, 5, "old"))
	put := func(txn string, cs ...Commit) {
		t.Helper()
		if err := s.PutPending(txn, "g", cs); err != nil {
			t.Fatal(err)
		}
	}
	put("t1", commit("a", 0, 10, "t1"), commit("a", 1, 11, ""))
	put("t2", commit("a", 2, 20, ""))
	if got := offsetsOf(t, s, "g"); !reflect.DeepEqual(got, map[TopicPartition]Offset{tp("a", 0): 5}) {
		t.Fatalf("pending visible: %v", got)
	}
	if c, ok, _ := s.Get("g", tp("a", 1)); ok {
		t.Fatalf("pending visible to Get: %+v", c)
	}
	pend, err := s.PendingPartitions("g")
	if err != nil || !reflect.DeepEqual(pend, map[TopicPartition]bool{tp("a", 0): true, tp("a", 1): true, tp("a", 2): true}) {
		t.Fatalf("pending partitions %v %v", pend, err)
	}
	t1 := Txn{ID: "t1", State: TxnCompleteCommit, Groups: []string{"g"}, LastProducerID: -1, LastEpoch: -1}
	if err := s.EndTxn(t1.Groups, t1, true); err != nil {
		t.Fatal(err)
	}
	t2 := Txn{ID: "t2", State: TxnCompleteAbort, Groups: []string{"g"}, LastProducerID: -1, LastEpoch: -1}
	if err := s.EndTxn(t2.Groups, t2, false); err != nil {
		t.Fatal(err)
	}
	want := map[TopicPartition]Offset{tp("a", 0): 10, tp("a", 1): 11}
	if got := offsetsOf(t, s, "g"); !reflect.DeepEqual(got, want) {
		t.Fatalf("after end: %v, want %v", got, want)
	}
	if c, _, _ := s.Get("g", tp("a", 0)); c.Metadata != "t1" {
		t.Fatalf("metadata %q", c.Metadata)
	}
	if pend, _ := s.PendingPartitions("g"); len(pend) != 0 {
		t.Fatalf("still pending: %v", pend)
	}
	// A repeated EndTxn (recovery) moves nothing: a later plain commit stays.
	mustCommit(t, s, "g", commit("a", 0, 99, ""))
	if err := s.EndTxn(t1.Groups, t1, true); err != nil {
		t.Fatal(err)
	}
	if got := offsetsOf(t, s, "g"); got[tp("a", 0)] != 99 {
		t.Fatalf("repeated EndTxn moved offsets: %v", got)
	}
	txns, _ := s.Txns()
	if len(txns) != 2 || txns[0].State != TxnCompleteCommit || txns[1].State != TxnCompleteAbort {
		t.Fatalf("states %+v", txns)
	}
}

// O5: pending offsets are not a group to retention or HasGroup, and
// retention leaves them alone.
func TestPendingOffsetsOutsideRetention(t *testing.T) {
	clk := newClock()
	s := open(t, t.TempDir(), Options{Now: clk.Now, Retention: time.Hour})
	if err := s.PutPending("t", "g", []Commit{commit("a", 0, 1, "")}); err != nil {
		t.Fatal(err)
	}
	if has, _ := s.HasGroup("g"); has {
		t.Fatal("HasGroup sees pending offsets")
	}
	clk.advance(2 * time.Hour)
	if _, err := s.Expire(clk.Now()); err != nil {
		t.Fatal(err)
	}
	if has, _ := s.HasPending("g", tp("a", 0)); !has {
		t.Fatal("retention dropped a pending offset")
	}
}

// Retention keeps an expired offset, and its group, while a transaction
// has an offset pending for the partition, and a group while any offset is
// pending for it, as Kafka does: the offsets expire, and the groups go, at
// the first check after the transaction ended with nothing left pending.
func TestExpiredOffsetKeptWhilePending(t *testing.T) {
	clk := newClock()
	s := open(t, t.TempDir(), Options{Now: clk.Now, Retention: time.Hour})
	mustCommit(t, s, "g", commit("a", 0, 5, ""), commit("a", 1, 7, ""))
	mustCommit(t, s, "h", commit("b", 0, 3, ""))
	_ = s.PutGroup(Group{ID: "h", ProtocolType: "consumer", State: GroupEmpty, StateTime: clk.Now()})
	if err := s.PutPending("t", "g", []Commit{commit("a", 0, 6, "")}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPending("t", "h", []Commit{commit("b", 1, 4, "")}); err != nil {
		t.Fatal(err)
	}
	clk.advance(2 * time.Hour)
	removed, err := s.Expire(clk.Now())
	if err != nil || len(removed) != 0 {
		t.Fatalf("with offsets pending: removed %v (%v), want none", removed, err)
	}
	if got := offsetsOf(t, s, "g"); !reflect.DeepEqual(got, map[TopicPartition]Offset{tp("a", 0): 5}) {
		t.Fatalf("g with a/0 pending: offsets %v, want a/0 alone", got)
	}
	if got := offsetsOf(t, s, "h"); len(got) != 0 {
		t.Fatalf("h with b/1 pending: offsets %v, want b/0 expired", got)
	}
	x := sampleTxn("t")
	x.Groups = []string{"g", "h"}
	if err := s.EndTxn(x.Groups, x, false); err != nil {
		t.Fatal(err)
	}
	if removed, err = s.Expire(clk.Now()); err != nil || !reflect.DeepEqual(removed, []string{"g", "h"}) {
		t.Fatalf("after the abort: removed %v (%v), want g and h", removed, err)
	}
}

// O6: EndTxn is one batch. The store's file system takes a crash image
// before every sync while EndTxn runs, and after it: each image holds all
// of the transaction's completion (offsets moved, state Complete) or none
// of it (offsets pending, state Ongoing).
func TestEndTxnAtomicAcrossCrash(t *testing.T) {
	c := newCrashImages()
	s := open(t, "db", Options{PebbleFS: c.fs})
	groups := []string{"g1", "g2", "g3"}
	for _, g := range groups {
		if err := s.PutPending("t", g, []Commit{commit("a", 0, 1, ""), commit("b", 1, 2, "")}); err != nil {
			t.Fatal(err)
		}
	}
	x := sampleTxn("t")
	x.Groups = groups
	if err := s.PutTxn(x); err != nil {
		t.Fatal(err)
	}
	c.arm(true)
	x.State = TxnCompleteCommit
	if err := s.EndTxn(groups, x, true); err != nil {
		t.Fatal(err)
	}
	images := c.arm(false)
	for i, img := range images {
		r := open(t, "db", Options{PebbleFS: img})
		txns, err := r.Txns()
		if err != nil || len(txns) != 1 {
			t.Fatalf("image %d: %v %v", i, txns, err)
		}
		committed := txns[0].State == TxnCompleteCommit
		if i == len(images)-1 && !committed {
			t.Fatalf("image after EndTxn returned: state %v", txns[0].State)
		}
		for _, g := range groups {
			n := len(offsetsOf(t, r, g))
			pend, _ := r.PendingPartitions(g)
			if committed && (n != 2 || len(pend) != 0) || !committed && (n != 0 || len(pend) != 2) {
				t.Fatalf("image %d (committed %v): group %s has %d committed, %d pending", i, committed, g, n, len(pend))
			}
		}
		r.Close()
	}
}

// crashImages is a crashable file system that keeps a crash image before
// every sync while armed, for the one-batch rules (O6): arm(true) takes
// an image of the state before, arm(false) one of the state after and
// returns them all in order.
type crashImages struct {
	mem *vfs.MemFS
	fs  vfs.FS

	mu     sync.Mutex
	armed  bool
	images []*vfs.MemFS
}

func newCrashImages() *crashImages {
	c := &crashImages{mem: vfs.NewCrashableMem()}
	c.fs = errorfs.Wrap(c.mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		switch op.Kind {
		case errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo:
			c.mu.Lock()
			if c.armed {
				c.images = append(c.images, c.mem.CrashClone(vfs.CrashCloneCfg{}))
			}
			c.mu.Unlock()
		}
		return nil
	}))
	return c
}

// arm starts or stops the images at syncs, taking one of the state now.
func (c *crashImages) arm(on bool) []*vfs.MemFS {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.images = append(c.images, c.mem.CrashClone(vfs.CrashCloneCfg{}))
	c.armed = on
	return c.images
}
