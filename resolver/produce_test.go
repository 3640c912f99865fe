package resolver

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"
)

// TestIdempotence is a transcript of one producer's batches (D4); each step
// runs against the state the earlier ones left.
func TestIdempotence(t *testing.T) {
	type step struct {
		name    string
		b       testBatch
		want    error
		wantOff Offset
		dup     bool
	}
	steps := []step{
		{"first batch", idem(7, 0, 0, 3), nil, 0, false},
		{"next", idem(7, 0, 3, 2), nil, 3, false},
		{"retry of first", idem(7, 0, 0, 3), nil, 0, true},
		{"retry of last", idem(7, 0, 3, 2), nil, 3, true},
		{"gap", idem(7, 0, 6, 1), ErrOutOfOrderSequence, 0, false},
		{"overlap not a retry", idem(7, 0, 4, 1), ErrOutOfOrderSequence, 0, false},
		{"in order", idem(7, 0, 5, 1), nil, 5, false},
		{"other producer any start", idem(8, 3, 42, 1), nil, 6, false},
		{"new epoch must start at 0", idem(7, 1, 6, 1), ErrOutOfOrderSequence, 0, false},
		{"new epoch at 0", idem(7, 1, 0, 1), nil, 7, false},
		{"stale epoch", idem(7, 0, 6, 1), ErrInvalidProducerEpoch, 0, false},
		{"stale epoch retry", idem(7, 0, 5, 1), ErrInvalidProducerEpoch, 0, false},
		{"non-idempotent skips checks", plain(1, 1), nil, 8, false},
	}
	run := func(t *testing.T, g *gateway, steps []step) {
		for _, s := range steps {
			res, err := g.r.Produce("t", 0, s.b.encode())
			if !isErr(err, s.want) {
				t.Fatalf("%s: got %v, want %v", s.name, err, s.want)
			}
			if err == nil && (res.BaseOffset != s.wantOff || res.Duplicate != s.dup) {
				t.Fatalf("%s: got %+v, want offset %d dup %v", s.name, res, s.wantOff, s.dup)
			}
		}
	}
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	run(t, g, steps)
	if _, hwm, _, _ := g.r.Bounds("t", 0); hwm != 9 {
		t.Fatalf("hwm %d: a duplicate was written", hwm)
	}

	// The state survives a clean reopen and a crash (no final checkpoint;
	// rebuilt from the log's batch headers).
	after := []step{
		{"retry survives", idem(7, 1, 0, 1), nil, 7, true},
		{"stale epoch survives", idem(7, 0, 6, 1), ErrInvalidProducerEpoch, 0, false},
		{"sequence continues", idem(7, 1, 1, 1), nil, 9, false},
		{"other producer's retry", idem(8, 3, 42, 1), nil, 6, true},
		{"other producer's gap", idem(8, 3, 44, 1), ErrOutOfOrderSequence, 0, false},
	}
	g.reopen()
	run(t, g, after[:2])
	g.crashReopen()
	run(t, g, after[2:])
	g.crashReopen()
	run(t, g, []step{{"retry after crash", idem(7, 1, 1, 1), nil, 9, true}})
}

// TestIdempotenceCheckpointReplay writes more than a checkpoint interval,
// crashes, and checks that retries of batches on both sides of the last
// checkpoint are recognized.
func TestIdempotenceCheckpointReplay(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	n := checkpointEvery*2 + 7
	for i := range n {
		g.produce("t", 0, idem(1, 0, int32(i), 1).encode())
		if i%5 == 0 { // a second producer, interleaved
			g.produce("t", 0, idem(2, 0, int32(i/5), 1).encode())
		}
	}
	g.r.bg.Wait() // checkpoints run in the background
	ck, err := g.r.states.loadCheckpoint(mustTopic(t, g.r, "t").parts[0].log)
	if err != nil || ck.Covered == 0 {
		t.Fatalf("no checkpoint written: %+v %v", ck.Covered, err)
	}
	_, hwm, _, _ := g.r.Bounds("t", 0)
	g.crashReopen()
	for i := n - kafkaDedupWindow; i < n; i++ {
		res, err := g.r.Produce("t", 0, idem(1, 0, int32(i), 1).encode())
		if err != nil || !res.Duplicate {
			t.Fatalf("retry of seq %d after crash: %+v %v", i, res, err)
		}
	}
	if _, err := g.r.Produce("t", 0, idem(1, 0, int32(n+1), 1).encode()); !errors.Is(err, ErrOutOfOrderSequence) {
		t.Fatalf("gap after crash: %v", err)
	}
	if res := g.produce("t", 0, idem(1, 0, int32(n), 1).encode()); res.BaseOffset != hwm || res.Duplicate {
		t.Fatalf("next after crash: %+v, want %d", res, hwm)
	}
}

// TestIdempotentConcurrentRetry: a retry racing its original gets the
// original offset, and only after it is durable; offsets stay dense.
func TestIdempotentConcurrentProducers(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	const producers, batches = 4, 30
	var wg sync.WaitGroup
	errs := make(chan error, producers*batches*2)
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range batches {
				b := idem(int64(p), 0, int32(s), 1).encode()
				first, err := g.r.Produce("t", 0, b)
				if err != nil {
					errs <- err
					return
				}
				again, err := g.r.Produce("t", 0, b)
				if err != nil || !again.Duplicate || again.BaseOffset != first.BaseOffset {
					errs <- fmt.Errorf("producer %d seq %d: retry %+v %v, first %+v", p, s, again, err, first)
					return
				}
			}
		}()
	}
	// A reader tails concurrently.
	done := make(chan struct{})
	go func() {
		defer close(done)
		off := Offset(0)
		for off < producers*batches {
			w := g.r.NewWaiter() // registered before the read: no append is missed
			if err := g.r.WatchWith(w, "t", 0); err != nil {
				errs <- err
				return
			}
			res, err := g.r.Fetch("t", 0, off, 1<<20, true, ReadUncommitted)
			if err != nil {
				w.Close()
				errs <- err
				return
			}
			for _, b := range res.Batches {
				if baseOffsetOf(b) != off {
					errs <- fmt.Errorf("reader: batch at %d, want %d", baseOffsetOf(b), off)
					return
				}
				off++
			}
			if len(res.Batches) == 0 {
				select {
				case <-w.C:
				case <-time.After(10 * time.Second):
					w.Close()
					errs <- errors.New("reader: no append within 10s")
					return
				}
			}
			w.Close()
		}
	}()
	wg.Wait()
	<-done
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, hwm, _, _ := g.r.Bounds("t", 0); hwm != producers*batches {
		t.Fatalf("hwm %d, want %d", hwm, producers*batches)
	}
}

// A Waiter on one partition (the empty read at the end, no cached EOF): at the end the fetch is empty and
// the waiter is not woken; the next append wakes it only once durable
// (the fetch then sees it), and wakes no waiter of another partition;
// deleting the topic wakes it, and a deleted partition cannot be watched.
func TestWaiterOnePartition(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 2, nil)
	watch := func(p int32) *Waiter {
		w := g.r.NewWaiter()
		if err := g.r.WatchWith(w, "t", p); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Close)
		return w
	}
	w, other := watch(0), watch(1)
	if res := g.fetch("t", 0, 0, 100); len(res.Batches) != 0 {
		t.Fatal("empty partition served batches")
	}
	select {
	case <-w.C:
		t.Fatal("woken before any append")
	default:
	}
	go g.r.Produce("t", 0, plain(1, 1).encode())
	waitSignal(t, w.C, "waiter after produce")
	// Woken only after the append is durable: the fetch sees it (no cached EOF).
	if res := g.fetch("t", 0, 0, 100); len(res.Batches) != 1 {
		t.Fatalf("after wake: %d batches", len(res.Batches))
	}
	select {
	case <-other.C:
		t.Fatal("other partition woken")
	default:
	}
	// Deleting the topic wakes waiters.
	if err := g.r.DeleteTopic("t"); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, w.C, "waiter after delete")
	if err := g.r.WatchWith(g.r.NewWaiter(), "t", 0); !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("watch deleted: %v", err)
	}
}

func TestListOffset(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	if off, ts, err := g.r.ListOffset("t", 0, -3); err != nil || off != -1 || ts != -1 {
		t.Fatalf("max ts of empty: %d %d %v", off, ts, err)
	}
	// Batches (base offset: record timestamps): 0: 98 99 100, 3: 299 300,
	// 5: 200, 6: 299 300, 8: 250. Answers are per record, as Kafka's: the
	// first record at or after the target in the first batch whose max
	// timestamp is; -3 the first record carrying the largest timestamp.
	for _, b := range []testBatch{plain(3, 98), plain(2, 299), plain(1, 200), plain(2, 299), plain(1, 250)} {
		g.produce("t", 0, b.encode())
	}
	for _, tc := range []struct {
		ts      int64
		wantOff Offset
		wantTS  int64
	}{
		{-1, 9, -1},
		{-2, 0, -1},
		{-3, 4, 300},
		{0, 0, 98},
		{99, 1, 99},
		{100, 2, 100},
		{101, 3, 299},
		{200, 3, 299},
		{300, 4, 300},
		{301, -1, -1},
	} {
		off, ts, err := g.r.ListOffset("t", 0, tc.ts)
		if err != nil || off != tc.wantOff || ts != tc.wantTS {
			t.Errorf("ListOffset(%d) = %d, %d, %v; want %d, %d", tc.ts, off, ts, err, tc.wantOff, tc.wantTS)
		}
	}
	// -3 survives a clean reopen and a crash.
	g.reopen()
	if off, ts, _ := g.r.ListOffset("t", 0, -3); off != 4 || ts != 300 {
		t.Fatalf("-3 after reopen: %d %d", off, ts)
	}
	g.produce("t", 0, plain(1, 400).encode())
	g.crashReopen()
	if off, ts, _ := g.r.ListOffset("t", 0, -3); off != 9 || ts != 400 {
		t.Fatalf("-3 after crash: %d %d", off, ts)
	}
	// After a trim the earliest moves; a trimmed max is recomputed.
	log := mustTopic(t, g.r, "t").parts[0].log
	if err := g.store.SoftTrim(log, 9); err != nil {
		t.Fatal(err)
	}
	if off, _, _ := g.r.ListOffset("t", 0, -2); off != 9 {
		t.Fatalf("earliest after trim: %d", off)
	}
	if off, ts, _ := g.r.ListOffset("t", 0, 0); off != 9 || ts != 400 {
		t.Fatalf("by time after trim: %d %d", off, ts)
	}
	if err := g.store.SoftTrim(log, 10); err != nil {
		t.Fatal(err)
	}
	if off, ts, _ := g.r.ListOffset("t", 0, -3); off != -1 || ts != -1 {
		t.Fatalf("-3 of emptied log: %d %d", off, ts)
	}
	if _, _, err := g.r.ListOffset("t", 5, -1); !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("bad partition: %v", err)
	}
}

func TestMaxTimestampAfterTrim(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	for _, b := range []testBatch{plain(1, 500), plain(1, 100), plain(1, 300), plain(1, 200)} {
		g.produce("t", 0, b.encode())
	}
	if err := g.store.SoftTrim(mustTopic(t, g.r, "t").parts[0].log, 1); err != nil {
		t.Fatal(err)
	}
	if off, ts, _ := g.r.ListOffset("t", 0, -3); off != 2 || ts != 300 {
		t.Fatalf("-3 after trimming the max: %d %d", off, ts)
	}
}

func TestInitProducerID(t *testing.T) {
	g := newGateway(t, Config{})
	ctx := context.Background()
	id0, e0, err := g.r.InitProducerID(ctx, -1, -1)
	if err != nil || e0 != 0 {
		t.Fatal(id0, e0, err)
	}
	id1, _, _ := g.r.InitProducerID(ctx, -1, -1)
	if id1 <= id0 {
		t.Fatalf("ids %d then %d", id0, id1)
	}
	for _, tc := range []struct {
		name    string
		id      int64
		epoch   int16
		wantEp  int16
		wantNew bool // a fresh id (Kafka's answer without a transactional id)
	}{
		{"bump", id0, 0, 1, false},
		{"lost answer retried", id0, 0, 1, false},
		{"bump again", id0, 1, 2, false},
		{"stale epoch", id0, 0, 0, true},
		{"future epoch", id0, 9, 0, true},
		{"never issued", 1 << 40, 0, 0, true},
	} {
		id, ep, err := g.r.InitProducerID(ctx, tc.id, tc.epoch)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.wantNew && (id <= id1 || ep != 0) || !tc.wantNew && (id != tc.id || ep != tc.wantEp) {
			t.Fatalf("%s: %d/%d", tc.name, id, ep)
		}
		id1 = max(id1, id)
	}
	g.crashReopen()
	id2, _, _ := g.r.InitProducerID(ctx, -1, -1)
	if id2 <= id1 {
		t.Fatalf("id reused after restart: %d <= %d", id2, id1)
	}
	if id, ep, err := g.r.InitProducerID(ctx, id0, 2); err != nil || id != id0 || ep != 3 {
		t.Fatalf("bump after restart: %d %d %v", id, ep, err)
	}
	// Epoch exhausted: a fresh id.
	if err := g.store.ApplyMeta(putProducerEpoch(id1, math.MaxInt16)); err != nil {
		t.Fatal(err)
	}
	if id, ep, err := g.r.InitProducerID(ctx, id1, math.MaxInt16); err != nil || id <= id2 || ep != 0 {
		t.Fatalf("exhausted: %d %d %v", id, ep, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := g.r.InitProducerID(cctx, -1, -1); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v", err)
	}
}

func TestCheckpointEncoding(t *testing.T) {
	in := map[int64]*producer{
		1:       {epoch: 3, lastSeen: 99, batches: []seqBatch{{first: 0, last: 4, offset: 10}, {first: 5, last: 5, offset: 20}}, lastTS: 1234, coordEpoch: 7},
		-0:      {epoch: 0, lastSeen: 1, lastTS: -1, coordEpoch: -1},
		1 << 50: {epoch: math.MaxInt16, lastSeen: -1, batches: []seqBatch{{first: math.MaxInt32, last: 2, offset: 1 << 40}}, lastTS: math.MaxInt64, coordEpoch: math.MaxInt32},
	}
	sameBase := func(got, want *producer) bool {
		return got != nil && got.epoch == want.epoch && got.lastSeen == want.lastSeen && fmt.Sprint(got.batches) == fmt.Sprint(want.batches)
	}
	same := func(got, want *producer) bool {
		return sameBase(got, want) && got.lastTS == want.lastTS && got.coordEpoch == want.coordEpoch
	}
	// The header is fixed-size: it does not grow with the producers (incremental producer checkpoints).
	b := encodeCheckpoint(77, timestampMark{TS: 5, Offset: 6})
	ck, err := decodeCheckpoint(b)
	if err != nil || ck.Covered != 77 || ck.maxTS != (timestampMark{TS: 5, Offset: 6}) || len(ck.producers) != 0 || ck.legacy {
		t.Fatalf("%+v %v", ck, err)
	}
	for id, want := range in {
		pb := encodeProducer(want)
		if got, err := decodeProducer(pb); err != nil || !same(got, want) {
			t.Fatalf("producer %d: %+v %v, want %+v", id, got, err, want)
		}
		base := len(encodeProducerBase(want)) // the form before transactions is still read
		for n := range len(pb) {
			if _, err := decodeProducer(pb[:n]); err == nil && n != base {
				t.Fatalf("producer truncated to %d decoded", n)
			}
		}
	}
	// A version 1 header (every producer inline) is still read.
	v1 := encodeCheckpointV1(77, in, timestampMark{TS: 5, Offset: 6})
	ck, err = decodeCheckpoint(v1)
	if err != nil || ck.Covered != 77 || !ck.legacy || len(ck.producers) != len(in) {
		t.Fatalf("v1: %+v %v", ck, err)
	}
	for id, want := range in {
		if !sameBase(ck.producers[id], want) {
			t.Fatalf("v1 producer %d: %+v, want %+v", id, ck.producers[id], want)
		}
	}
	for _, b := range [][]byte{b, v1} {
		for n := range len(b) {
			if _, err := decodeCheckpoint(b[:n]); err == nil {
				t.Fatalf("truncated to %d decoded", n)
			}
		}
		if _, err := decodeCheckpoint(append(b, 0)); err == nil {
			t.Fatal("trailing byte decoded")
		}
	}
}

// encodeCheckpointV1 is the version 1 format: the header, then producer
// count u32 and per producer its id i64 and encodeProducer's fields.
func encodeCheckpointV1(covered Offset, producers map[int64]*producer, m timestampMark) []byte {
	be := binary.BigEndian
	b := []byte{checkpointVersionV1}
	b = be.AppendUint64(b, uint64(covered))
	b = be.AppendUint64(b, uint64(m.TS))
	b = be.AppendUint64(b, uint64(m.Offset))
	b = be.AppendUint32(b, uint32(len(producers)))
	for id, ps := range producers {
		b = be.AppendUint64(b, uint64(id))
		b = append(b, encodeProducerBase(ps)...)
	}
	return b
}

func TestSequenceWrap(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	g.produce("t", 0, idem(3, 0, math.MaxInt32-1, 2).encode())
	if res := g.produce("t", 0, idem(3, 0, 0, 1).encode()); res.BaseOffset != 2 {
		t.Fatalf("after wrap: %+v", res)
	}
	if res := g.produce("t", 0, idem(3, 0, math.MaxInt32-1, 2).encode()); !res.Duplicate || res.BaseOffset != 0 {
		t.Fatalf("retry across wrap: %+v", res)
	}
}
