package resolver

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage"
)

// readAll fetches every batch of a partition from its log start to its
// high watermark, with copies of their bytes.
func readBatches(t *testing.T, r *Resolver, topic string, part int32) [][]byte {
	t.Helper()
	start, hwm, _, err := r.Bounds(topic, part)
	if err != nil {
		t.Fatalf("bounds: %v", err)
	}
	var out [][]byte
	for off := start; off < hwm; {
		res, err := r.Fetch(topic, part, off, 1<<20, true, ReadUncommitted)
		if err != nil {
			t.Fatalf("fetch @%d: %v", off, err)
		}
		if len(res.Batches) == 0 {
			t.Fatalf("fetch @%d below the high watermark %d returned nothing", off, hwm)
		}
		for _, b := range res.Batches {
			out = append(out, bytes.Clone(b))
			h := decodeHeader(b)
			off = h.BaseOffset + Offset(h.LastOffsetDelta) + 1
		}
	}
	return out
}

// feed is a fill that hands batches to appendBatch in order.
func feed(batches [][]byte) func(func([]byte) error) error {
	return func(appendBatch func([]byte) error) error {
		for _, b := range batches {
			if err := appendBatch(b); err != nil {
				return err
			}
		}
		return nil
	}
}

// at returns tb encoded with base offset off.
func at(tb testBatch, off Offset) []byte {
	b := tb.encode()
	setBaseOffset(b, off)
	return b
}

func sameBatches(t *testing.T, what string, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d batches, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: batch %d (offset %d) differs from the source's (offset %d)", what, i, baseOffsetOf(got[i]), baseOffsetOf(want[i]))
		}
	}
}

func deletionMarks(t *testing.T, st *storage.Store) []storage.LogID {
	t.Helper()
	var out []storage.LogID
	err := st.ScanMeta(prefixDeleting, func(k, _ []byte) error {
		out = append(out, storage.LogID(bytesToU64(k[len(prefixDeleting):])))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func bytesToU64(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

// sourcePartition fills resolver a's partition t/0 with a plain batch, an
// idempotent producer's batches, a committed and an open transaction,
// and returns the offset of producer 7's last batch (sequence 18, two
// records).
func sourcePartition(t *testing.T, a *gateway) Offset {
	t.Helper()
	a.create("t", 1, nil)
	a.produce("t", 0, plain(2, 100).encode())
	for i := range 6 {
		a.produce("t", 0, idem(7, 0, int32(i*3), 3).encode())
	}
	if err := a.r.AddTxnPartition("t", 0, 9, 0); err != nil {
		t.Fatal(err)
	}
	a.produce("t", 0, txnBatch(9, 0, 0, 2).encode())
	if err := a.r.WriteTxnMarker("t", 0, 9, 0, true, 1); err != nil {
		t.Fatal(err)
	}
	if err := a.r.AddTxnPartition("t", 0, 11, 0); err != nil {
		t.Fatal(err)
	}
	a.produce("t", 0, txnBatch(11, 0, 0, 1).encode())
	return a.produce("t", 0, idem(7, 0, 18, 2).encode()).BaseOffset
}

// The copy of the published batches, the durable replacement, the old copy's retirement: a partition rebuilt from another resolver's batches serves
// the same bytes at the same offsets, with the same bounds (the open
// transaction holds the LSO back), deduplicates a retry of the last
// idempotent batch, continues the producers' sequences and the open
// transaction, drops the old log, and keeps all of it across a restart.
func TestReplacePartitionFromAnotherResolver(t *testing.T) {
	a := newGateway(t, Config{})
	last := sourcePartition(t, a)
	src := readBatches(t, a.r, "t", 0)
	aStart, aHW, aLSO, err := a.r.Bounds("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if aLSO >= aHW {
		t.Fatalf("source LSO %d should be held back by the open transaction (hwm %d)", aLSO, aHW)
	}

	b := newGateway(t, Config{})
	tp := b.create("t", 1, nil)
	for range 3 {
		b.produce("t", 0, plain(5, 1).encode()) // the stale copy
	}
	oldLog, err := b.r.Replicas().LogOf("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.r.Replicas().ReplacePartition("t", 0, 0, feed(src)); err != nil {
		t.Fatalf("ReplacePartition: %v", err)
	}
	newLog, err := b.r.Replicas().LogOf("t", 0)
	if err != nil || newLog == oldLog {
		t.Fatalf("LogOf after replace: %v, %v (old %v)", newLog, err, oldLog)
	}
	check := func(when string) {
		t.Helper()
		sameBatches(t, when, readBatches(t, b.r, "t", 0), src)
		start, hw, lso, err := b.r.Bounds("t", 0)
		if err != nil || start != aStart || hw != aHW || lso != aLSO {
			t.Fatalf("%s: bounds %d %d %d (%v), want the source's %d %d %d", when, start, hw, lso, err, aStart, aHW, aLSO)
		}
		res, err := b.r.Produce("t", 0, idem(7, 0, 18, 2).encode())
		if err != nil || !res.Duplicate || res.BaseOffset != last {
			t.Fatalf("%s: retry of the last copied batch: %+v, %v; want a duplicate at %d", when, res, err, last)
		}
		if got, err := b.r.Replicas().LogOf("t", 0); err != nil || got != newLog {
			t.Fatalf("%s: LogOf %v, %v, want %v", when, got, err, newLog)
		}
		name, id, idx, ok := b.r.Replicas().PartitionOfLog(newLog)
		if !ok || name != "t" || id != tp.ID || idx != 0 {
			t.Fatalf("%s: PartitionOfLog(new) = %q %v %d %v", when, name, id, idx, ok)
		}
		if _, _, _, ok := b.r.Replicas().PartitionOfLog(oldLog); ok {
			t.Fatalf("%s: the old log is still bound", when)
		}
		if slices.Contains(b.store.Logs(), oldLog) {
			t.Fatalf("%s: the old log %v was not deleted", when, oldLog)
		}
	}
	check("after replace")
	b.reopen()
	check("after restart")
	b.crashReopen()
	check("after crash")

	// The rebuilt state goes on: the producer's next sequence, a gap
	// refused, the open transaction taking its next batch unregistered.
	if res := b.produce("t", 0, idem(7, 0, 20, 1).encode()); res.BaseOffset != aHW {
		t.Fatalf("next batch at %d, want %d", res.BaseOffset, aHW)
	}
	if _, err := b.r.Produce("t", 0, idem(7, 0, 30, 1).encode()); !errors.Is(err, ErrOutOfOrderSequence) {
		t.Fatalf("sequence gap after replace: %v, want ErrOutOfOrderSequence", err)
	}
	if _, err := b.r.Produce("t", 0, txnBatch(11, 0, 1, 1).encode()); err != nil {
		t.Fatalf("open transaction's next batch: %v", err)
	}
}

// The copy of the published batches: a copy starting past 0 keeps its start (ListOffsets earliest), both
// with batches and empty, across a restart; below it is out of range.
func TestReplacePartitionAtStart(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 2, nil)
	g.produce("t", 0, plain(3, 1).encode())
	src := [][]byte{at(idem(5, 0, 0, 4), 1000), at(idem(5, 0, 4, 2), 1004), at(plain(3, 50), 1006)}
	if err := g.r.Replicas().ReplacePartition("t", 0, 1000, feed(src)); err != nil {
		t.Fatalf("ReplacePartition: %v", err)
	}
	if err := g.r.Replicas().ReplacePartition("t", 1, 500, feed(nil)); err != nil {
		t.Fatalf("empty ReplacePartition: %v", err)
	}
	check := func(when string) {
		t.Helper()
		for _, c := range []struct {
			part       int32
			start, end Offset
		}{{0, 1000, 1009}, {1, 500, 500}} {
			if off, _, err := g.r.ListOffset("t", c.part, -2); err != nil || off != c.start {
				t.Fatalf("%s: t/%d earliest %d, %v; want %d", when, c.part, off, err, c.start)
			}
			if off, _, err := g.r.ListOffset("t", c.part, -1); err != nil || off != c.end {
				t.Fatalf("%s: t/%d latest %d, %v; want %d", when, c.part, off, err, c.end)
			}
			if _, err := g.r.Fetch("t", c.part, c.start-1, 1<<20, true, ReadUncommitted); !errors.Is(err, ErrOffsetOutOfRange) {
				t.Fatalf("%s: t/%d fetch below the start: %v", when, c.part, err)
			}
		}
		sameBatches(t, when, readBatches(t, g.r, "t", 0), src)
		if res, err := g.r.Produce("t", 0, idem(5, 0, 4, 2).encode()); err != nil || !res.Duplicate || res.BaseOffset != 1004 {
			t.Fatalf("%s: retry: %+v, %v; want a duplicate at 1004", when, res, err)
		}
	}
	check("after replace")
	g.reopen()
	check("after restart")
	if res := g.produce("t", 1, plain(1, 1).encode()); res.BaseOffset != 500 {
		t.Fatalf("first produce to the empty copy at %d, want 500", res.BaseOffset)
	}
	if res := g.produce("t", 0, idem(5, 0, 6, 1).encode()); res.BaseOffset != 1009 {
		t.Fatalf("next produce at %d, want 1009", res.BaseOffset)
	}
}

// The copy of the published batches, the durable replacement: a copy that is not one sound batch at the next offset, or a
// fill that fails, changes nothing: the old partition serves and takes
// produces, no log or deletion mark is left, also after a restart.
func TestReplacePartitionRefused(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	g.produce("t", 0, idem(3, 0, 0, 2).encode())
	g.produce("t", 0, plain(4, 9).encode())
	before := readBatches(t, g.r, "t", 0)
	oldLog, _ := g.r.Replicas().LogOf("t", 0)
	logs := g.store.Logs()

	good := at(plain(2, 1), 0)
	corrupt := at(plain(2, 1), 2)
	corrupt[len(corrupt)-1] ^= 0xff
	short := at(plain(2, 1), 2)
	short = short[:len(short)-1]
	errSource := errors.New("source unavailable")
	cases := []struct {
		name string
		fill func(func([]byte) error) error
		want error
	}{
		{"gap", feed([][]byte{good, at(plain(1, 1), 5)}), ErrCorruptBatch},
		{"overlap", feed([][]byte{good, at(plain(1, 1), 1)}), ErrCorruptBatch},
		{"wrong first base", feed([][]byte{at(plain(1, 1), 3)}), ErrCorruptBatch},
		{"bad crc", feed([][]byte{good, corrupt}), ErrCorruptBatch},
		{"truncated", feed([][]byte{good, short}), ErrCorruptBatch},
		{"two batches in one", feed([][]byte{append(bytes.Clone(good), at(plain(1, 1), 2)...)}), ErrCorruptBatch},
		{"fill fails", func(app func([]byte) error) error {
			if err := app(good); err != nil {
				return err
			}
			return errSource
		}, errSource},
		{"refusal ignored", func(app func([]byte) error) error {
			_ = app(at(plain(1, 1), 7))
			return nil
		}, ErrCorruptBatch},
	}
	for _, c := range cases {
		if err := g.r.Replicas().ReplacePartition("t", 0, 0, c.fill); !errors.Is(err, c.want) {
			t.Fatalf("%s: %v, want %v", c.name, err, c.want)
		}
		if got, _ := g.r.Replicas().LogOf("t", 0); got != oldLog {
			t.Fatalf("%s: rebound to %v", c.name, got)
		}
		sameBatches(t, c.name, readBatches(t, g.r, "t", 0), before)
		if got := g.store.Logs(); !slices.Equal(got, logs) {
			t.Fatalf("%s: logs %v, want %v", c.name, got, logs)
		}
		if m := deletionMarks(t, g.store); len(m) != 0 {
			t.Fatalf("%s: deletion marks left: %v", c.name, m)
		}
	}
	// The old partition's producer state is untouched: its retry is a
	// duplicate and its next batch follows.
	if res, err := g.r.Produce("t", 0, idem(3, 0, 0, 2).encode()); err != nil || !res.Duplicate || res.BaseOffset != 0 {
		t.Fatalf("retry on the kept partition: %+v, %v", res, err)
	}
	if res := g.produce("t", 0, idem(3, 0, 2, 1).encode()); res.BaseOffset != 6 {
		t.Fatalf("produce after refused replaces at %d, want 6", res.BaseOffset)
	}
	g.reopen()
	if got, _ := g.r.Replicas().LogOf("t", 0); got != oldLog || len(readBatches(t, g.r, "t", 0)) != 3 {
		t.Fatalf("after restart: log %v, want %v with 3 batches", got, oldLog)
	}
}

// The old copy's retirement: a long poll waiting on the partition is woken by its replacement,
// and a read after the wake-up reads the new copy.
func TestReplacePartitionWakesLongPoll(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	g.produce("t", 0, plain(2, 1).encode())
	w := g.r.NewWaiter()
	defer w.Close()
	if err := g.r.WatchWith(w, "t", 0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C:
		t.Fatal("woken before anything happened")
	default:
	}
	src := [][]byte{at(plain(3, 1), 40)}
	if err := g.r.Replicas().ReplacePartition("t", 0, 40, feed(src)); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, w.C, "the long poll's wake-up")
	if !w.Fired()[PartitionKey{Topic: "t", Partition: 0}] {
		t.Fatal("the replaced partition is not among the fired ones")
	}
	res := g.fetch("t", 0, 40, 1<<20)
	if res.HighWatermark != 43 || len(res.Batches) != 1 || !bytes.Equal(res.Batches[0], src[0]) {
		t.Fatalf("read after the wake-up: %+v", res)
	}
}

// The old copy's retirement: producers and readers running through a replacement get either a
// result or ErrNotLeader, never another error; every produce that began
// after ReplacePartition returned is in the new copy at its offset.
func TestReplacePartitionConcurrent(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	g.produce("t", 0, plain(1, 1).encode())
	var replaced atomic.Bool
	type ack struct {
		off Offset
		val []byte
	}
	var (
		mu     sync.Mutex
		after  []ack
		wg     sync.WaitGroup
		stop   atomic.Bool
		errs   = make(chan error, 8)
		enough = make(chan struct{})
		once   sync.Once
	)
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				began := replaced.Load()
				tb := plain(1, 1)
				tb.value = fmt.Appendf(nil, "w%d-%d", w, i)
				b := tb.encode()
				res, err := g.r.Produce("t", 0, b)
				switch {
				case errors.Is(err, ErrNotLeader):
				case err != nil:
					errs <- fmt.Errorf("produce: %w", err)
					return
				case began:
					mu.Lock()
					after = append(after, ack{res.BaseOffset, b})
					if len(after) >= 20 {
						once.Do(func() { close(enough) })
					}
					mu.Unlock()
				}
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				_, hwm, _, err := g.r.Bounds("t", 0)
				if err == nil {
					_, err = g.r.Fetch("t", 0, max(hwm-1, 0), 1<<20, true, ReadUncommitted)
				}
				if err != nil && !errors.Is(err, ErrNotLeader) && !errors.Is(err, ErrOffsetOutOfRange) {
					errs <- fmt.Errorf("read: %w", err)
					return
				}
			}
		}()
	}
	for i := range 50 {
		start := Offset(1000 * (i + 1))
		if err := g.r.Replicas().ReplacePartition("t", 0, start, feed([][]byte{at(plain(2, 1), start)})); err != nil {
			t.Fatalf("replace %d: %v", i, err)
		}
	}
	replaced.Store(true)
	// Let the producers complete some produces on the final copy.
	select {
	case <-enough:
	case err := <-errs:
		stop.Store(true)
		wg.Wait()
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for produces after the replacement")
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, a := range after {
		res := g.fetch("t", 0, a.off, 1<<20)
		if len(res.Batches) == 0 || baseOffsetOf(res.Batches[0]) != a.off {
			t.Fatalf("acknowledged produce at %d is not in the copy", a.off)
		}
		got := bytes.Clone(res.Batches[0])
		setBaseOffset(got, 0)
		want := bytes.Clone(a.val)
		setBaseOffset(want, 0)
		binaryLeaderEpochZero(got)
		binaryLeaderEpochZero(want)
		if !bytes.Equal(got, want) {
			t.Fatalf("offset %d holds other bytes than the produce acknowledged there", a.off)
		}
	}
}

// binaryLeaderEpochZero clears the partition leader epoch, which the
// produce stamps.
func binaryLeaderEpochZero(b []byte) {
	for i := batchLenPrefix; i < batchLenPrefix+4; i++ {
		b[i] = 0
	}
}

// The durable replacement: a crash at each step of a replacement leaves the old binding or the
// new one, never a half-made log: after the id is reserved, after the new
// log is filled and opened (its producer state checkpointed), and after
// the new binding is durable but before the old log went.
func TestReplacePartitionCrash(t *testing.T) {
	src := [][]byte{at(idem(8, 0, 0, 2), 0), at(idem(8, 0, 2, 3), 2)}
	for _, step := range []string{"reserved", "built", "rebound"} {
		t.Run(step, func(t *testing.T) {
			g := newGateway(t, Config{})
			g.create("t", 1, nil)
			g.produce("t", 0, plain(4, 1).encode())
			before := readBatches(t, g.r, "t", 0)
			oldLog, _ := g.r.Replicas().LogOf("t", 0)
			r := g.r
			r.adminMu.Lock()
			t0, _ := r.boundTopic("t")
			log, err := r.Replicas().reserveLogLocked()
			if err == nil && step != "reserved" {
				var np *partition
				if np, err = r.Replicas().buildPartition(t0, 0, log, 0, Cache{}, feed(src)); err == nil && np.app.prod.m[8] == nil {
					err = errors.New("built partition has no producer state")
				}
			}
			if err == nil && step == "rebound" {
				err = r.Replicas().persistRebind(t0, 0, log)
			}
			r.adminMu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			g.crashReopen()
			want, gone := oldLog, log
			if step == "rebound" {
				want, gone = log, oldLog
			}
			if got, _ := g.r.Replicas().LogOf("t", 0); got != want {
				t.Fatalf("bound to %v after the crash, want %v", got, want)
			}
			if slices.Contains(g.store.Logs(), gone) {
				t.Fatalf("log %v survived the crash", gone)
			}
			if m := deletionMarks(t, g.store); len(m) != 0 {
				t.Fatalf("deletion marks left: %v", m)
			}
			if keys, _ := g.r.states.producerKeys(gone); len(keys) != 0 {
				t.Fatalf("producer state of %v left: %d keys", gone, len(keys))
			}
			if step == "rebound" {
				sameBatches(t, "after the crash", readBatches(t, g.r, "t", 0), src)
				if res, err := g.r.Produce("t", 0, idem(8, 0, 2, 3).encode()); err != nil || !res.Duplicate || res.BaseOffset != 2 {
					t.Fatalf("retry after the crash: %+v, %v", res, err)
				}
				return
			}
			sameBatches(t, "after the crash", readBatches(t, g.r, "t", 0), before)
		})
	}
}

// The old copy's retirement: a produce written through the old partition but not answered when
// the replacement happens fails with ErrNotLeader instead of answering
// an offset of the old log; so does a retry of an old batch answered by
// the old partition's state. The same produces through the new binding
// are taken.
func TestReplacePartitionPendingProduce(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	g.produce("t", 0, idem(4, 0, 0, 1).encode())
	pending, err := g.r.ProduceAsync("t", 0, idem(4, 0, 1, 1).encode())
	if err != nil {
		t.Fatal(err)
	}
	retry, err := g.r.ProduceAsync("t", 0, idem(4, 0, 0, 1).encode())
	if err != nil {
		t.Fatal(err)
	}
	if err := g.r.Replicas().ReplacePartition("t", 0, 0, feed(nil)); err != nil {
		t.Fatal(err)
	}
	if res, err := pending.Wait(); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("pending produce across the replacement: %+v, %v; want ErrNotLeader", res, err)
	}
	if res, err := retry.Wait(); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("pending retry across the replacement: %+v, %v; want ErrNotLeader", res, err)
	}
	if res := g.produce("t", 0, idem(4, 0, 1, 1).encode()); res.BaseOffset != 0 || res.Duplicate {
		t.Fatalf("produce on the new copy: %+v", res)
	}
}

// The durable replacement: the copy runs without the catalog lock. A replacement that
// finishes while another one is copying wins; the slower one is
// discarded (ErrNotLeader) and leaves no log, as does one whose topic is
// deleted during its copy (ErrUnknownTopic).
func TestReplacePartitionRaces(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	g.create("gone", 1, nil)
	logs := g.store.Logs()
	// Deterministic order: the other change happens inside the slow
	// copy's fill, before it returns.
	// during runs in its own goroutine with a deadline: were the copy
	// under the catalog lock, it would wait for the slow one forever.
	slow := func(topic string, during func()) error {
		return g.r.Replicas().ReplacePartition(topic, 0, 0, func(app func([]byte) error) error {
			done := make(chan struct{})
			go func() {
				defer close(done)
				during()
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Error("a catalog change waited for a copy in progress")
			}
			return app(at(plain(1, 1), 0))
		})
	}
	var fastLog storage.LogID
	err := slow("t", func() {
		if err := g.r.Replicas().ReplacePartition("t", 0, 7, feed(nil)); err != nil {
			t.Errorf("fast replacement: %v", err)
		}
		fastLog, _ = g.r.Replicas().LogOf("t", 0)
	})
	if !errors.Is(err, ErrNotLeader) {
		t.Fatalf("slow replacement after a fast one: %v, want ErrNotLeader", err)
	}
	if got, _ := g.r.Replicas().LogOf("t", 0); got != fastLog {
		t.Fatalf("bound to %v, want the fast replacement's %v", got, fastLog)
	}
	if off, _, _ := g.r.ListOffset("t", 0, -2); off != 7 {
		t.Fatalf("start %d, want the fast replacement's 7", off)
	}
	err = slow("gone", func() {
		if err := g.r.DeleteTopic("gone"); err != nil {
			t.Errorf("delete: %v", err)
		}
	})
	if !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("replacement of a deleted topic: %v, want ErrUnknownTopic", err)
	}
	if got := g.store.Logs(); len(got) != len(logs)-1 || !slices.Contains(got, fastLog) {
		t.Fatalf("logs %v: want only the fast replacement's beside the old ones but gone's", got)
	}
	if m := deletionMarks(t, g.store); len(m) != 0 {
		t.Fatalf("deletion marks left: %v", m)
	}
}

// The old copy's retirement: a produce through a handle resolved before
// ReplacePartition is appended to the new copy, never to the retired log,
// where its acknowledged batch would be lost with the log.
func TestReplacePartitionOldHandleProducesToNewCopy(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	g.produce("t", 0, plain(1, 100).encode())
	old, err := g.r.Resolve("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.r.Replicas().ReplacePartition("t", 0, 0, feed(nil)); err != nil {
		t.Fatal(err)
	}
	want := plain(2, 200).encode()
	pp, err := old.ProduceAsync(ParseBatches(want), nil)
	if err != nil {
		t.Fatalf("produce through the old handle: %v", err)
	}
	res, err := pp.Wait()
	if err != nil || res.BaseOffset != 0 {
		t.Fatalf("produce through the old handle: %+v, %v; want offset 0 of the new copy", res, err)
	}
	got := readBatches(t, g.r, "t", 0)
	if len(got) != 1 || baseOffsetOf(got[0]) != 0 || len(got[0]) != len(want) {
		t.Fatalf("the new copy holds %d batches, want the one acknowledged", len(got))
	}
}
