package offsets

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// dump is every key and value of db.
func dump(t *testing.T, db *pebble.DB) map[string]string {
	t.Helper()
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	out := map[string]string{}
	for it.First(); it.Valid(); it.Next() {
		out[string(it.Key())] = string(it.Value())
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return out
}

// everyWrite is every write of the store, each with something to write.
func everyWrite(s *Store) []func() error {
	tp := TopicPartition{Topic: "t", Partition: 1}
	member := ClassicMember{ID: "m", ProtocolType: "consumer", Protocols: []Protocol{{Name: "range", Metadata: []byte{1}}}}
	txn := Txn{ID: "tx", ProducerID: 7, LastProducerID: -1, LastEpoch: -1, State: TxnOngoing, Groups: []string{"g"}, Partitions: []TopicPartition{tp}}
	done := txn
	done.State = TxnCompleteCommit
	return []func() error{
		func() error { return s.Commit("g", []Commit{{TopicPartition: tp, Offset: 5, LeaderEpoch: -1}}) },
		func() error { return s.Commit("h", []Commit{{TopicPartition: tp, Offset: 6, LeaderEpoch: -1}}) },
		func() error { return s.DeleteOffsets("h", []TopicPartition{tp}) },
		func() error { return s.PutGroup(Group{ID: "g", ProtocolType: "consumer", State: GroupEmpty}) },
		func() error {
			return s.PutClassicGroup(ClassicGroup{Group: Group{ID: "c", ProtocolType: "consumer", State: GroupActive}, Leader: "m", Members: []ClassicMember{member}}, 0)
		},
		func() error { return s.PutConsumerGroup(ConsumerGroup{Group: Group{ID: "k", State: GroupActive}}, 0) },
		func() error { return s.PutShareGroup(ShareGroup{ID: "s", Epoch: 1}) },
		func() error { return s.PutShareState("s", []SharePartition{{TopicPartition: tp, StartOffset: 3}}) },
		func() error { return s.DeleteShareState("s", []TopicPartition{tp}) },
		func() error {
			return s.PutGroupConfigs("s", map[string]string{"share.record.lock.duration.ms": "15000"})
		},
		func() error { return s.PutTxn(txn) },
		func() error {
			return s.PutPending("tx", "g", []Commit{{TopicPartition: tp, Offset: 9, LeaderEpoch: -1}})
		},
		func() error { return s.EndTxn([]string{"g"}, done, true) },
		func() error {
			return s.PutTxn(Txn{ID: "tx2", LastProducerID: -1, LastEpoch: -1, State: TxnOngoing, Groups: []string{"g"}})
		},
		func() error {
			return s.PutPending("tx2", "g", []Commit{{TopicPartition: tp, Offset: 10, LeaderEpoch: -1}})
		},
		func() error { return s.DeleteTxn(Txn{ID: "tx2", Groups: []string{"g"}}) },
		func() error { return s.DeleteShareGroup("s") },
		func() error {
			return s.Commit("old", []Commit{{TopicPartition: tp, Offset: 1, LeaderEpoch: -1, CommitTime: time.Unix(1, 0)}})
		},
		func() error { return expireErr(s.Expire(time.Now())) },
		func() error { return s.DeleteGroup("c") },
	}
}

func expireErr(_ []string, err error) error { return err }

// O8: every synced write goes through Mirror as the batch that is then
// applied, so a replica fed only by Mirror ends identical to the store.
func TestMirrorSeesEveryWrite(t *testing.T) {
	replica, err := pebble.Open(t.TempDir(), &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer replica.Close()
	calls := 0
	mirror := func(b *pebble.Batch) error {
		calls++
		rb := replica.NewBatch()
		defer rb.Close()
		if err := rb.SetRepr(append([]byte(nil), b.Repr()...)); err != nil {
			return err
		}
		return replica.Apply(rb, pebble.Sync)
	}
	s := open(t, t.TempDir(), Options{Mirror: mirror})
	for i, write := range everyWrite(s) {
		if err := write(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		got, want := dump(t, replica), dump(t, s.db)
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Fatalf("after write %d (%d mirrored), the replica fed by Mirror differs from the store:\nreplica %q\nstore   %q", i, calls, got, want)
		}
	}
}

// O8: a write whose Mirror fails fails, and nothing of it is applied.
func TestMirrorFailureAppliesNothing(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	if err := s.Commit("g", []Commit{{TopicPartition: TopicPartition{Topic: "t"}, Offset: 1, LeaderEpoch: -1}}); err != nil {
		t.Fatal(err)
	}
	// Something for Expire to remove.
	if err := s.Commit("expired", []Commit{{TopicPartition: TopicPartition{Topic: "t"}, Offset: 1, LeaderEpoch: -1, CommitTime: time.Unix(1, 0)}}); err != nil {
		t.Fatal(err)
	}
	before := dump(t, s.db)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("mirror refused")
	s = open(t, dir, Options{Mirror: func(*pebble.Batch) error { return refused }})
	for i, write := range everyWrite(s) {
		if err := write(); !errors.Is(err, refused) {
			t.Errorf("write %d: error %v, want the mirror's", i, err)
		}
	}
	if after := dump(t, s.db); !reflect.DeepEqual(after, before) {
		t.Fatalf("failed mirror still wrote locally:\nbefore %q\nafter  %q", before, after)
	}
}

// O8: a mirrored write is synced locally before it is acknowledged, so a
// crash right after it keeps it; only a store whose mirror is its one
// durable copy (Options.MirrorDurable: never reopened, restored from the
// mirror instead) applies its groups unsynced, and there a crash image
// may lack them.
func TestMirrorLocalSyncUnlessDurable(t *testing.T) {
	mirror := func(*pebble.Batch) error { return nil }
	for _, durable := range []bool{false, true} {
		fs := vfs.NewCrashableMem()
		s, err := Open("db", Options{PebbleFS: fs, Mirror: mirror, MirrorDurable: durable})
		if err != nil {
			t.Fatal(err)
		}
		mustCommit(t, s, "g", commit("t", 0, 42, "m"))
		crashed := fs.CrashClone(vfs.CrashCloneCfg{})
		_ = s.Close()
		s = open(t, "db", Options{PebbleFS: crashed})
		got, kept := offsetsOf(t, s, "g")[tp("t", 0)]
		switch {
		case !durable && (!kept || got != 42):
			t.Fatalf("mirrored commit without MirrorDurable: after a crash %v (kept %v), want 42", got, kept)
		case durable && kept:
			t.Fatalf("MirrorDurable: the commit survived the crash image, so its local apply was synced")
		}
	}
}
