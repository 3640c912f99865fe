package resolver

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/storage/vfstest"
)

// TestCrashProducerState crashes the machine (unsynced writes lost, tails
// torn; vfstest.Machine) while two idempotent producers append, at random
// instants or commit steps across several checkpoint intervals, then
// checks D2 and D4 after recovery: every acknowledged batch is at its
// acknowledged offset, a retry of each producer's last five batches is a
// duplicate at its offset, and the rebuilt producer state matches the log
// exactly (its successor is next, a gap is refused), so the window between
// "data durable" and "producer state durable" loses nothing.
func TestCrashProducerState(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	var stats crashStats
	base := vfstest.Seed(t)
	for i := range uint64(seeds) {
		runProducerCrash(t, base+i, &stats)
		if t.Failed() {
			t.Fatalf("failed at seed %d (replay: -crash.seed=%d)", base+i, base)
		}
	}
	t.Logf("%d crashes: %d at a commit step, %d with a checkpoint (offsets covered %d), %d acknowledged batches checked",
		seeds, stats.points, stats.checkpointed, stats.covered, stats.acked)
	if !testing.Short() && stats.checkpointed == 0 {
		t.Fatal("no crash happened after a checkpoint")
	}
}

type ackKey struct {
	pid int64
	seq int32
}

// crashStats shows that crashes land after checkpoints, not only before.
type crashStats struct {
	checkpointed, acked, points int
	covered                     int64
}

func runProducerCrash(t *testing.T, seed uint64, stats *crashStats) {
	rng := rand.New(rand.NewPCG(seed, 11))
	m := vfstest.NewMachine(0)
	const dir = "/data"
	st, err := storage.Open(dir, storage.Options{FS: m.Files, PebbleFS: m.Index})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(st, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CreateTopic("t", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}

	var (
		mu    sync.Mutex
		acked = map[ackKey]Offset{}
		stop  bool
		wg    sync.WaitGroup
	)
	ackCh := make(chan struct{}, 1024)
	const producers, perProducer = 2, 200
	for pid := range int64(producers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seq := int32(0)
			for i := range perProducer {
				n := 1 + i%3
				res, err := r.Produce("t", 0, idem(pid, 0, seq, n).encode())
				mu.Lock()
				if err != nil && !stop {
					t.Errorf("seed %d: producer %d seq %d: %v", seed, pid, seq, err)
				}
				if err != nil || stop {
					mu.Unlock()
					return
				}
				acked[ackKey{pid, seq}] = res.BaseOffset
				mu.Unlock()
				seq += int32(n)
				ackCh <- struct{}{}
			}
		}()
	}
	crashAfter := 1 + rng.IntN(producers*perProducer-1)
	for range crashAfter {
		waitSignal(t, ackCh, "an acknowledged produce")
	}
	// Freeze the acknowledged set, then crash: now (pebble first), or at
	// a random step of a later group commit (either clone order).
	var img vfstest.Image
	ackedAtCrash := map[ackKey]Offset{}
	keep := vfstest.RandomKeep(rand.New(rand.NewPCG(seed, 12)))
	crash := func(order vfstest.Order) {
		mu.Lock()
		defer mu.Unlock()
		stop = true
		for k, v := range acked {
			ackedAtCrash[k] = v
		}
		img = m.Crash(order, keep)
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	if rng.IntN(2) == 0 {
		fired := make(chan struct{})
		point, order := vfstest.Points[rng.IntN(len(vfstest.Points))], vfstest.Orders[rng.IntN(2)]
		m.At(point, 1+rng.IntN(3), func() { crash(order); close(fired) })
		select {
		case <-fired:
			stats.points++
		case <-finished: // every batch was produced first
			crash(vfstest.PebbleFirst)
		}
		m.Disarm()
	} else {
		crash(vfstest.PebbleFirst)
	}
	<-finished
	r.Close()
	st.Close()

	core, logs := observer.New(zapcore.WarnLevel)
	st2, err := storage.Open(dir, storage.Options{FS: img.Files, PebbleFS: img.Index})
	if err != nil {
		t.Fatalf("seed %d: reopen store: %v", seed, err)
	}
	defer st2.Close()
	// The first topic's only partition is log 1.
	if v, err := st2.GetMeta(idKey(prefixCheckpoint, 1)); err == nil {
		ck, _ := decodeCheckpoint(v)
		stats.checkpointed++
		stats.covered += int64(ck.Covered)
	}
	stats.acked += len(ackedAtCrash)
	r2, err := Open(st2, Config{Logger: zap.New(core)})
	if err != nil {
		t.Fatalf("seed %d: reopen resolver: %v", seed, err)
	}
	defer r2.Close()
	if n := logs.Len(); n != 0 {
		t.Fatalf("seed %d: recovery warned: %v", seed, logs.All()[0].Message)
	}
	checkProducerCrash(t, seed, r2, ackedAtCrash)
}

func checkProducerCrash(t *testing.T, seed uint64, r *Resolver, acked map[ackKey]Offset) {
	start, hwm, _, err := r.Bounds("t", 0)
	if err != nil || start != 0 {
		t.Fatalf("seed %d: bounds %d %d %v", seed, start, hwm, err)
	}
	// Read the whole log: dense, valid batches (D2, D3).
	inLog := map[ackKey]Offset{}
	last := map[int64]batchHeader{}     // each producer's last batch
	recent := map[int64][]batchHeader{} // each producer's batches, in log order
	for off := Offset(0); off < hwm; {
		res, err := r.Fetch("t", 0, off, 1<<20, true, ReadUncommitted)
		if err != nil || len(res.Batches) == 0 {
			t.Fatalf("seed %d: fetch @%d: %v", seed, off, err)
		}
		for _, b := range res.Batches {
			h, _, err := parseBatch(b)
			if err != nil || h.BaseOffset != off {
				t.Fatalf("seed %d: batch at %d (want %d): %v", seed, h.BaseOffset, off, err)
			}
			inLog[ackKey{h.ProducerID, h.BaseSequence}] = off
			recent[h.ProducerID] = append(recent[h.ProducerID], h)
			if l, ok := last[h.ProducerID]; !ok || h.BaseSequence > l.BaseSequence {
				last[h.ProducerID] = h
			}
			off += Offset(h.Records)
		}
	}
	for k, off := range acked {
		if got, ok := inLog[k]; !ok || got != off {
			t.Fatalf("seed %d: acknowledged %+v at %d: in log %v at %d", seed, k, off, ok, got)
		}
	}
	// D4 after the crash: a retry of each of a producer's last five
	// batches (Kafka's in-flight window) is answered as a duplicate at
	// its original offset and appends nothing.
	for pid, hs := range recent {
		for _, h := range hs[max(0, len(hs)-5):] {
			_, end, _, _ := r.Bounds("t", 0)
			res, err := r.Produce("t", 0, idem(pid, 0, h.BaseSequence, int(h.Records)).encode())
			if err != nil || !res.Duplicate || res.BaseOffset != inLog[ackKey{pid, h.BaseSequence}] {
				t.Fatalf("seed %d: retry of producer %d's batch %d (of the last %d): %+v %v", seed, pid, h.BaseSequence, min(5, len(hs)), res, err)
			}
			if _, after, _, _ := r.Bounds("t", 0); after != end {
				t.Fatalf("seed %d: a duplicate retry appended: end %d -> %d", seed, end, after)
			}
		}
	}
	// The rebuilt producer state matches the log (D4).
	for pid, h := range last {
		seq := h.BaseSequence
		res, err := r.Produce("t", 0, idem(pid, 0, seq, int(h.Records)).encode())
		if err != nil || !res.Duplicate || res.BaseOffset != inLog[ackKey{pid, seq}] {
			t.Fatalf("seed %d: retry of producer %d's last batch %d: %+v %v", seed, pid, seq, res, err)
		}
		next := h.LastSequence() + 1
		if _, err := r.Produce("t", 0, idem(pid, 0, next+1, 1).encode()); !errors.Is(err, ErrOutOfOrderSequence) {
			t.Fatalf("seed %d: gap after producer %d's %d: %v", seed, pid, seq, err)
		}
		_, end, _, _ := r.Bounds("t", 0)
		res, err = r.Produce("t", 0, idem(pid, 0, next, 1).encode())
		if err != nil || res.Duplicate || res.BaseOffset != end {
			t.Fatalf("seed %d: producer %d's next %d: %+v %v (end %d)", seed, pid, next, res, err, end)
		}
	}
}
