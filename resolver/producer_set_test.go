package resolver

import (
	"errors"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage"
)

// producerCount is the partition's producer state size and the number of
// producer keys persisted for it.
func producerCount(t *testing.T, g *gateway) (inMemory, persisted int) {
	t.Helper()
	p, err := g.r.mu.partition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	p.app.Lock()
	s := p.app.prod
	inMemory = len(s.m)
	listed, agrees := s.order.Len(), recencyAgrees(s)
	p.app.Unlock() // before any Fatalf: the cleanup's Close takes it
	if listed != inMemory || !agrees {
		t.Fatalf("recency list of %d disagrees with %d producers", listed, inMemory)
	}
	err = g.store.ScanMeta(idKey(prefixProducer, uint64(p.log)), func(_, _ []byte) error {
		persisted++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return inMemory, persisted
}

// A client that uses a fresh producer id for every batch: the partition
// keeps at most MaxProducers producers (the producer cap), in memory and on disk, the
// checkpoint header does not grow (incremental producer checkpoints), and the most recent producers keep
// their duplicate detection across a restart.
func TestFreshProducerPerBatchBounded(t *testing.T) {
	const maxProducers, n = 20, 10 * checkpointEvery
	g := newGateway(t, Config{MaxProducers: maxProducers})
	g.create("t", 1, nil)
	for i := 0; i < n; i += 50 {
		var pend []*PendingProduce
		for id := i; id < min(i+50, n); id++ {
			pp, err := g.r.ProduceAsync("t", 0, idem(int64(id), 0, 0, 1).encode())
			if err != nil {
				t.Fatal(err)
			}
			pend = append(pend, pp)
		}
		for _, pp := range pend {
			if _, err := pp.Wait(); err != nil {
				t.Fatal(err)
			}
		}
		if mem, disk := producerCount(t, g); mem > maxProducers || disk > maxProducers {
			t.Fatalf("after %d producers: %d in memory, %d persisted; cap %d", i+50, mem, disk, maxProducers)
		}
	}
	g.reopen()
	if mem, disk := producerCount(t, g); mem != maxProducers || disk != maxProducers {
		t.Fatalf("after reopen: %d in memory, %d persisted, want %d", mem, disk, maxProducers)
	}
	p, _ := g.r.mu.partition("t", 0)
	if v, err := g.store.GetMeta(idKey(prefixCheckpoint, uint64(p.log))); err != nil || len(v) != 25 {
		t.Fatalf("checkpoint header of %d bytes (%v), want 25", len(v), err)
	}
	if res := g.produce("t", 0, idem(n-1, 0, 0, 1).encode()); !res.Duplicate || res.BaseOffset != n-1 {
		t.Fatalf("retry of the latest producer's batch: %+v", res)
	}
	// The evicted producers' state is gone: a retry is a new batch, as
	// after expiry (the cost of the cap).
	if res := g.produce("t", 0, idem(0, 0, 0, 1).encode()); res.Duplicate {
		t.Fatalf("evicted producer 0 still remembered: %+v", res)
	}
	// Deleting the topic deletes its producers' keys.
	if err := g.r.DeleteTopic("t"); err != nil {
		t.Fatal(err)
	}
	left := 0
	g.store.ScanMeta(prefixProducer, func(_, _ []byte) error { left++; return nil })
	if left != 0 {
		t.Fatalf("%d producer keys left after the topic's deletion", left)
	}
}

// producer.id.expiration.ms (producer expiry): a producer that has not appended for
// longer is dropped at the next append or checkpoint, and its key deleted;
// one within it is kept.
func TestProducerExpiration(t *testing.T) {
	now := fixedClock(1_700_000_000_000)
	exp := time.Hour
	g := newGateway(t, Config{ProducerIDExpiration: exp, Ledger: ledgerNow(now)})
	g.create("t", 1, nil)
	g.produce("t", 0, idem(1, 0, 0, 1).encode())
	now.set(1_700_000_000_000 + exp.Milliseconds()/2)
	g.produce("t", 0, idem(2, 0, 0, 1).encode())
	g.reopen()
	if mem, disk := producerCount(t, g); mem != 2 || disk != 2 {
		t.Fatalf("before expiry: %d in memory, %d persisted", mem, disk)
	}
	now.set(1_700_000_000_000 + exp.Milliseconds() + 1)
	g.produce("t", 0, idem(3, 0, 0, 1).encode())
	p, _ := g.r.mu.partition("t", 0)
	p.app.Lock()
	_, has1 := p.app.prod.m[1]
	_, has2 := p.app.prod.m[2]
	p.app.Unlock()
	if has1 || !has2 {
		t.Fatalf("after %v: producer 1 kept %v, producer 2 kept %v", exp, has1, has2)
	}
	g.reopen()
	if mem, disk := producerCount(t, g); mem != 2 || disk != 2 {
		t.Fatalf("after expiry and reopen: %d in memory, %d persisted, want 2", mem, disk)
	}
	if res := g.produce("t", 0, idem(2, 0, 0, 1).encode()); !res.Duplicate {
		t.Fatalf("producer 2's retry: %+v", res)
	}
}

// A version 1 checkpoint (every producer inline in the header) is read on
// Open and rewritten as a header plus one key per producer.
func TestCheckpointV1Upgrade(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	g.produce("t", 0, idem(7, 0, 0, 2).encode())
	g.produce("t", 0, idem(8, 0, 0, 1).encode())
	g.reopen()
	p, _ := g.r.mu.partition("t", 0)
	log := p.log
	ck, err := g.r.states.loadCheckpoint(log)
	if err != nil || len(ck.producers) != 2 {
		t.Fatalf("checkpoint %+v, %v", ck, err)
	}
	g.close()
	st, err := storage.Open(g.dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops := []storage.MetaOp{{Key: idKey(prefixCheckpoint, uint64(log)), Value: encodeCheckpointV1(ck.Covered, ck.producers, ck.maxTS)}}
	for id := range ck.producers {
		ops = append(ops, storage.MetaOp{Key: producerKey(log, id), Delete: true})
	}
	if err := st.ApplyMeta(ops...); err != nil {
		t.Fatal(err)
	}
	st.Close()
	g.open()
	if mem, disk := producerCount(t, g); mem != 2 || disk != 2 {
		t.Fatalf("after the upgrade: %d in memory, %d persisted, want 2", mem, disk)
	}
	if v, err := g.store.GetMeta(idKey(prefixCheckpoint, uint64(log))); err != nil || v[0] != checkpointVersion {
		t.Fatalf("header %x, %v", v, err)
	}
	if res := g.produce("t", 0, idem(7, 0, 0, 2).encode()); !res.Duplicate || res.BaseOffset != 0 {
		t.Fatalf("retry after the upgrade: %+v", res)
	}
}

// recencyAgrees says whether every producer's recency element names it.
func recencyAgrees(s *producerSet) bool {
	for id, ps := range s.m {
		if ps.elem == nil || ps.elem.Value.(int64) != id {
			return false
		}
	}
	return true
}

// A producer's state is updated in place as it appends in its epoch
// (producerSet.record): each append still counts as its latest, for
// producer expiry and for the recency order that expiry and the producer
// cap look at the front of; a new epoch replaces the state and keeps the
// producer's one place in that order.
func TestProducerStateUpdatedInPlace(t *testing.T) {
	const t0 = 1_700_000_000_000
	now := fixedClock(t0)
	exp := time.Hour
	g := newGateway(t, Config{ProducerIDExpiration: exp, MaxProducers: 3, Ledger: ledgerNow(now)})
	g.create("t", 1, nil)
	g.produce("t", 0, idem(1, 0, 0, 1).encode())
	now.set(t0 + 1)
	g.produce("t", 0, idem(2, 0, 0, 1).encode())
	now.set(t0 + exp.Milliseconds()/2)
	first := g.produce("t", 0, idem(1, 0, 1, 1).encode()) // producer 1 is the most recent again
	now.set(t0 + exp.Milliseconds() + 2)
	g.produce("t", 0, idem(3, 0, 0, 1).encode()) // producer 2 has expired; producer 1 has not
	p, _ := g.r.mu.partition("t", 0)
	has := func(id int64) bool {
		p.app.Lock()
		defer p.app.Unlock()
		_, ok := p.app.prod.m[id]
		return ok
	}
	if !has(1) || has(2) || !has(3) {
		t.Fatalf("after producer 2's expiry: producers 1, 2, 3 kept %v %v %v, want true false true", has(1), has(2), has(3))
	}
	if res := g.produce("t", 0, idem(1, 0, 1, 1).encode()); !res.Duplicate || res.BaseOffset != first.BaseOffset {
		t.Fatalf("producer 1's retry of its append in place: %+v, want duplicate at %d", res, first.BaseOffset)
	}
	// New epochs for producer 1, each a new state in its one place.
	for epoch := int16(1); epoch <= 5; epoch++ {
		g.produce("t", 0, idem(1, epoch, 0, 1).encode())
		if mem, _ := producerCount(t, g); mem != 2 {
			t.Fatalf("after producer 1's epoch %d: %d producers, want 2", epoch, mem)
		}
		g.produce("t", 0, idem(1, epoch, 1, 1).encode())
	}
	g.produce("t", 0, idem(4, 0, 0, 1).encode()) // within the cap of 3: nobody evicted
	if !has(1) || !has(3) || !has(4) {
		t.Fatalf("producers 1, 3, 4 kept %v %v %v within the cap", has(1), has(3), has(4))
	}
	if _, err := g.r.Produce("t", 0, idem(1, 4, 2, 1).encode()); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("producer 1 at an older epoch: %v, want %v", err, ErrInvalidProducerEpoch)
	}
}
