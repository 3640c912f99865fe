package offsets

import (
	"reflect"
	"testing"
)

// endTxn completes transaction id in groups (O6).
func endTxn(t *testing.T, s *Store, id string, commit bool, groups ...string) {
	t.Helper()
	state := map[bool]TxnState{true: TxnCompleteCommit, false: TxnCompleteAbort}[commit]
	x := Txn{ID: id, State: state, Groups: groups, LastProducerID: -1, LastEpoch: -1}
	if err := s.EndTxn(groups, x, commit); err != nil {
		t.Fatal(err)
	}
}

func putPending(t *testing.T, s *Store, id, group string, cs ...Commit) {
	t.Helper()
	if err := s.PutPending(id, group, cs); err != nil {
		t.Fatal(err)
	}
}

// DeleteOffsets drops the pending offsets of its partitions, of every
// transaction in the group, with the committed ones: a transaction that
// commits afterwards commits nothing for them, as in Kafka. Other
// partitions and other groups keep theirs.
func TestDeleteOffsetsDropsPending(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	mustCommit(t, s, "g", commit("a", 0, 5, ""), commit("a", 1, 6, ""))
	putPending(t, s, "t1", "g", commit("a", 0, 10, ""), commit("a", 1, 11, ""), commit("b", 0, 12, ""))
	putPending(t, s, "t2", "g", commit("a", 1, 21, ""))
	putPending(t, s, "t1", "h", commit("a", 1, 31, ""))
	if err := s.DeleteOffsets("g", []TopicPartition{tp("a", 1), tp("c", 0)}); err != nil {
		t.Fatal(err)
	}
	pend, err := s.PendingPartitions("g")
	if err != nil || !reflect.DeepEqual(pend, map[TopicPartition]bool{tp("a", 0): true, tp("b", 0): true}) {
		t.Fatalf("pending after OffsetDelete: %v %v", pend, err)
	}
	if has, _ := s.HasPending("h", tp("a", 1)); !has {
		t.Fatal("OffsetDelete of one group dropped another group's pending offset")
	}
	endTxn(t, s, "t1", true, "g", "h")
	endTxn(t, s, "t2", true, "g")
	want := map[TopicPartition]Offset{tp("a", 0): 10, tp("b", 0): 12}
	if got := offsetsOf(t, s, "g"); !reflect.DeepEqual(got, want) {
		t.Fatalf("after commits: %v, want %v", got, want)
	}
	if got := offsetsOf(t, s, "h"); !reflect.DeepEqual(got, map[TopicPartition]Offset{tp("a", 1): 31}) {
		t.Fatalf("other group after commit: %v", got)
	}
}

// DeleteGroup drops the pending offsets of every transaction in the group:
// a transaction that commits (or aborts) afterwards leaves the group gone.
// A TxnOffsetCommit after the deletion is the transaction's again, and
// its commit makes the group anew, as Kafka's does.
func TestDeleteGroupDropsPending(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	mustCommit(t, s, "g", commit("a", 0, 5, ""))
	putPending(t, s, "t1", "g", commit("a", 0, 10, ""), commit("a", 1, 11, ""))
	putPending(t, s, "t2", "g", commit("b", 0, 20, ""))
	putPending(t, s, "t1", "gg", commit("a", 0, 40, "")) // a group whose id extends g's
	if err := s.DeleteGroup("g"); err != nil {
		t.Fatal(err)
	}
	if pend, _ := s.PendingPartitions("g"); len(pend) != 0 {
		t.Fatalf("pending after DeleteGroup: %v", pend)
	}
	endTxn(t, s, "t1", true, "g", "gg")
	endTxn(t, s, "t2", false, "g")
	if got := offsetsOf(t, s, "g"); len(got) != 0 {
		t.Fatalf("a commit after DeleteGroup brought the group back: %v", got)
	}
	if has, _ := s.HasGroup("g"); has {
		t.Fatal("group back after DeleteGroup and a commit")
	}
	if got := offsetsOf(t, s, "gg"); !reflect.DeepEqual(got, map[TopicPartition]Offset{tp("a", 0): 40}) {
		t.Fatalf("DeleteGroup(g) touched gg: %v", got)
	}
	putPending(t, s, "t3", "g", commit("a", 0, 1, ""))
	if err := s.DeleteGroup("g"); err != nil {
		t.Fatal(err)
	}
	putPending(t, s, "t3", "g", commit("a", 1, 2, ""))
	endTxn(t, s, "t3", true, "g")
	if got := offsetsOf(t, s, "g"); !reflect.DeepEqual(got, map[TopicPartition]Offset{tp("a", 1): 2}) {
		t.Fatalf("commit of offsets written after the deletion: %v", got)
	}
}

// A deletion and the pending offsets it drops are one synced batch: a
// crash image taken at any sync during DeleteGroup or DeleteOffsets, and
// after, holds the group's committed and pending offsets both or neither,
// and a commit of the transaction after reopening never brings back what
// the image shows deleted.
func TestDeletionDropsPendingAcrossCrash(t *testing.T) {
	for _, whole := range []bool{true, false} {
		c := newCrashImages()
		s := open(t, "db", Options{PebbleFS: c.fs})
		mustCommit(t, s, "g", commit("a", 0, 1, ""), commit("a", 1, 2, ""))
		putPending(t, s, "t", "g", commit("a", 0, 10, ""), commit("a", 1, 11, ""))
		c.arm(true)
		var err error
		if whole {
			err = s.DeleteGroup("g")
		} else {
			err = s.DeleteOffsets("g", []TopicPartition{tp("a", 0), tp("a", 1)})
		}
		if err != nil {
			t.Fatal(err)
		}
		images := c.arm(false)
		for i, img := range images {
			r := open(t, "db", Options{PebbleFS: img})
			n := len(offsetsOf(t, r, "g"))
			pend, _ := r.PendingPartitions("g")
			deleted := n == 0 && len(pend) == 0
			if !deleted && (n != 2 || len(pend) != 2) || i == len(images)-1 && !deleted {
				t.Fatalf("whole %v, image %d of %d: %d committed, %d pending", whole, i, len(images), n, len(pend))
			}
			endTxn(t, r, "t", true, "g")
			if got := offsetsOf(t, r, "g"); deleted && len(got) != 0 || !deleted && len(got) != 2 {
				t.Fatalf("whole %v, image %d (deleted %v): after commit %v", whole, i, deleted, got)
			}
			r.Close()
		}
	}
}
