package resolver

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kgateway/kgateway/recordbatch"
	"github.com/kgateway/kgateway/resolver/txnstate"
	"github.com/kgateway/kgateway/storage"
)

// kvTxnBatch is kvBatchIdem with the transactional attribute.
func kvTxnBatch(pid int64, epoch int16, seq int32, recs ...kv) []byte {
	b := kvBatchIdem(pid, epoch, seq, recs...)
	binary.BigEndian.PutUint16(b[attrsOff:], binary.BigEndian.Uint16(b[attrsOff:])|transactionalBit)
	binary.BigEndian.PutUint32(b[crcOff:], crc32c(b[attrsOff:]))
	return b
}

// readCommitted reads the partition from its log start to its LSO as
// Kafka's read_committed client does (committedRead): the records of the
// data batches, without those of the aborted transactions each response
// lists, without markers, offsets strictly increasing.
func readCommitted(t *testing.T, g *gateway, topic string) []gotRecord {
	t.Helper()
	start, _, lso, err := g.r.Bounds(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []gotRecord
	last := Offset(-1)
	for off := start; off < lso; {
		res, err := g.r.Fetch(topic, 0, off, 1<<20, true, ReadCommitted)
		if err != nil {
			t.Fatalf("read_committed @%d: %v", off, err)
		}
		if len(res.Batches) == 0 {
			break // a gap up to the LSO (reads across gaps)
		}
		pending, aborted := res.Aborted, map[int64]bool{}
		for _, b := range res.Batches {
			h := decodeHeader(b)
			end := h.BaseOffset + Offset(h.LastOffsetDelta) + 1
			for len(pending) > 0 && pending[0].FirstOffset < end {
				aborted[pending[0].ProducerID] = true
				pending = pending[1:]
			}
			if end <= off {
				continue
			}
			switch {
			case h.Control():
				if m, err := recordbatch.DecodeMarker(b); err != nil {
					t.Fatalf("marker at %d: %v", h.BaseOffset, err)
				} else if !m.Commit {
					delete(aborted, h.ProducerID)
				}
			case h.Transactional() && aborted[h.ProducerID]:
			default:
				sec, err := decodeSection(b, 1<<30)
				if err != nil {
					t.Fatal(err)
				}
				recs, err := parseRecords(h, sec)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range recs {
					if r.off < off {
						continue
					}
					if r.off <= last {
						t.Fatalf("offset %d after %d", r.off, last)
					}
					last = r.off
					out = append(out, gotRecord{off: r.off, key: string(r.key), value: string(r.value), tomb: r.value == nil})
				}
			}
			off = end
		}
	}
	return out
}

// rawFrom is the stored batches from off to the high watermark.
func rawFrom(t *testing.T, g *gateway, topic string, off Offset) [][]byte {
	t.Helper()
	_, hwm, _, err := g.r.Bounds(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for off < hwm {
		res := g.fetch(topic, 0, off, 1<<20)
		if len(res.Batches) == 0 {
			break
		}
		for _, b := range res.Batches {
			out = append(out, b)
			h := decodeHeader(b)
			off = h.BaseOffset + Offset(h.LastOffsetDelta) + 1
		}
	}
	return out
}

// txnWorkload produces random keyed records through plain batches and
// transactional producers, keeping what a consumer must see.
type txnWorkload struct {
	t         *testing.T
	g         *gateway
	rng       *rand.Rand
	c         *clock
	committed model // latest committed record per key
	all       map[Offset]gotRecord
	aborted   map[Offset]bool // records of aborted transactions
	open      map[int64][]gotRecord
	seq       map[int64]int32
}

func newTxnWorkload(t *testing.T, g *gateway, rng *rand.Rand, c *clock) *txnWorkload {
	return &txnWorkload{t: t, g: g, rng: rng, c: c, committed: model{}, all: map[Offset]gotRecord{},
		aborted: map[Offset]bool{}, open: map[int64][]gotRecord{}, seq: map[int64]int32{}}
}

func (w *txnWorkload) records() ([]kv, []gotRecord) {
	n := 1 + w.rng.IntN(3)
	recs, got := make([]kv, n), make([]gotRecord, n)
	for i := range recs {
		k := fmt.Sprintf("key-%d", w.rng.IntN(20))
		if w.rng.IntN(6) == 0 {
			recs[i] = tomb(k, w.c.millis())
		} else {
			recs[i] = rec(k, fmt.Sprintf("v%d", w.rng.Uint32()), w.c.millis())
		}
		got[i] = gotRecord{key: k, value: string(recs[i].value), tomb: recs[i].tomb}
	}
	return recs, got
}

// commit applies records to the committed model: a later offset wins.
func (w *txnWorkload) commit(rs []gotRecord) {
	for _, r := range rs {
		if cur, ok := w.committed[r.key]; !ok || cur.off < r.off {
			w.committed[r.key] = r
		}
	}
}

// step produces one plain batch, one transactional batch, or ends a
// transaction.
func (w *txnWorkload) step() {
	defer w.c.advance(1)
	switch x := w.rng.IntN(10); {
	case x < 3:
		recs, got := w.records()
		base := w.g.produce("c", 0, kvBatch(recs...)).BaseOffset
		for i := range got {
			got[i].off = base + Offset(i)
			w.all[got[i].off] = got[i]
		}
		w.commit(got)
	case x < 8:
		pid := int64(100 + w.rng.IntN(3))
		if _, ok := w.open[pid]; !ok {
			if err := w.g.r.AddTxnPartition("c", 0, pid, 0); err != nil {
				w.t.Fatal(err)
			}
		}
		recs, got := w.records()
		base := w.g.produce("c", 0, kvTxnBatch(pid, 0, w.seq[pid], recs...)).BaseOffset
		w.seq[pid] += int32(len(recs))
		for i := range got {
			got[i].off = base + Offset(i)
			w.all[got[i].off] = got[i]
		}
		w.open[pid] = append(w.open[pid], got...)
	default:
		for pid := range w.open {
			w.end(pid, w.rng.IntN(2) == 0)
			return
		}
	}
}

// end commits or aborts pid's transaction.
func (w *txnWorkload) end(pid int64, commit bool) {
	if err := w.g.r.WriteTxnMarker("c", 0, pid, 0, commit, 0); err != nil {
		w.t.Fatal(err)
	}
	if commit {
		w.commit(w.open[pid])
	} else {
		for _, r := range w.open[pid] {
			w.aborted[r.off] = true
		}
	}
	delete(w.open, pid)
}

func (w *txnWorkload) endAll() {
	for pid := range w.open {
		w.end(pid, w.rng.IntN(2) == 0)
	}
}

// checkPartial checks a partition cleaned up to some point: nothing of
// an aborted transaction reads committed, every key's latest committed
// record below the LSO does.
func (w *txnWorkload) checkPartial(got []gotRecord, lso Offset) {
	w.t.Helper()
	seen := map[Offset]bool{}
	for _, r := range got {
		want, ok := w.all[r.off]
		switch {
		case !ok || want != r:
			w.t.Fatalf("read_committed read %+v, produced %+v", r, want)
		case w.aborted[r.off]:
			w.t.Fatalf("read_committed read %+v of an aborted transaction", r)
		}
		seen[r.off] = true
	}
	latest := map[string]gotRecord{}
	for off, r := range w.all {
		if off < lso && !w.aborted[off] && !w.isOpen(off) {
			if cur, ok := latest[r.key]; !ok || cur.off < off {
				latest[r.key] = r
			}
		}
	}
	for k, r := range latest {
		if !seen[r.off] && !r.tomb {
			w.t.Fatalf("key %q: its latest committed record %+v below the LSO %d is gone", k, r, lso)
		}
	}
}

func (w *txnWorkload) isOpen(off Offset) bool {
	for _, rs := range w.open {
		for _, r := range rs {
			if r.off == off {
				return true
			}
		}
	}
	return false
}

// checkMarkers implements markers kept while needed and marker removal on a fully cleaned partition: every marker left
// ends a transaction with a batch left, or is its producer's last batch;
// every aborted-index entry names an ABORT marker that is there.
func checkMarkers(t *testing.T, g *gateway, topic string) {
	t.Helper()
	start, _, _, _ := g.r.Bounds(topic, 0)
	batches := rawFrom(t, g, topic, start)
	markers := map[Offset]batchHeader{}
	inTxn := map[int64]bool{}
	lastOf := map[int64]Offset{}
	for _, b := range batches {
		h := decodeHeader(b)
		if h.ProducerID >= 0 {
			lastOf[h.ProducerID] = h.BaseOffset
		}
	}
	for _, b := range batches {
		h := decodeHeader(b)
		switch {
		case h.Control():
			markers[h.BaseOffset] = h
			if !inTxn[h.ProducerID] && lastOf[h.ProducerID] != h.BaseOffset {
				t.Fatalf("marker at %d of producer %d survived the delete horizon with no batch of its transaction left", h.BaseOffset, h.ProducerID)
			}
			delete(inTxn, h.ProducerID)
		case h.Transactional():
			inTxn[h.ProducerID] = true
		}
	}
	p, _ := g.r.mu.partition(topic, 0)
	p.mu.Lock()
	idx := append([]txnstate.Aborted(nil), p.mu.txn.Aborted...)
	p.mu.Unlock()
	for _, a := range idx {
		if h, ok := markers[a.Last]; !ok || h.ProducerID != a.PID {
			t.Fatalf("aborted-index entry %+v names no marker of its producer (marker removal)", a)
		}
	}
}

// The transactional property (compaction of transactions): random keyed records in plain
// batches and in transactions of three producers, committed and aborted,
// interleaved. A pass with a transaction open changes nothing at or past
// the LSO and read_committed never sees an aborted record; once all have
// ended and the delete horizons passed, both isolation levels read
// exactly the latest committed record per key, the markers left are
// those still needed, and the aborted index names only markers that are
// there; the same after a restart.
func TestCleanerTxnProperty(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { cleanerTxnProperty(t, seed) })
	}
}

func cleanerTxnProperty(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	c := fixedClock(1_000_000)
	budget := int64(0)
	if seed%2 == 1 {
		budget = 24 * 30 // several passes (the dedupe budget)
	}
	g := compactGateway(t, c, CleanerConfig{DedupeBufferSize: budget})
	g.create("c", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": fmt.Sprint(300 + rng.IntN(600)),
		"delete.retention.ms": "1000", "min.cleanable.dirty.ratio": "0"})
	w := newTxnWorkload(t, g, rng, c)
	for range 150 {
		w.step()
	}
	// One transaction open across the pass, with ledgers after it.
	if len(w.open) == 0 {
		for w.open[100] == nil {
			w.step()
		}
	}
	for range 40 {
		w.step()
		if len(w.open) == 0 { // keep one open
			w.g.r.AddTxnPartition("c", 0, 102, 0)
			recs, got := w.records()
			base := g.produce("c", 0, kvTxnBatch(102, 0, w.seq[102], recs...)).BaseOffset
			w.seq[102] += int32(len(recs))
			for i := range got {
				got[i].off = base + Offset(i)
				w.all[got[i].off] = got[i]
			}
			w.open[102] = got
		}
	}
	rollPartition(t, g, "c")
	_, _, lso, _ := g.r.Bounds("c", 0)
	before := rawFrom(t, g, "c", lso)
	if err := g.r.Passes().RunCleaner(c.now()); err != nil {
		t.Fatal(err)
	}
	if after := rawFrom(t, g, "c", lso); !equalBatches(before, after) {
		t.Fatalf("a pass changed the log at or past the LSO %d (the LSO bound on cleaning)", lso)
	}
	w.checkPartial(readCommitted(t, g, "c"), lso)

	w.endAll()
	for range 40 {
		w.step()
	}
	w.endAll()
	rollPartition(t, g, "c")
	for range 3 {
		if err := g.r.Passes().RunCleaner(c.now()); err != nil {
			t.Fatal(err)
		}
		c.advance(1001)
	}
	if err := g.r.Passes().RunCleaner(c.now()); err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		checkCompacted(t, readAll(t, g, "c"), w.committed, false)
		checkCompacted(t, readCommitted(t, g, "c"), w.committed, false)
		checkMarkers(t, g, "c")
	}
	check()
	g.reopen()
	check()
	// A restart that replays the whole cleaned log (transaction recovery) ends every
	// transaction again: each marker still needed is there (markers kept while needed).
	replayFromStart(t, g, "c")
	if _, hwm, lso, _ := g.r.Bounds("c", 0); lso != hwm {
		t.Fatalf("after a replay of the cleaned log the LSO is %d, the high watermark %d: a transaction lost its marker", lso, hwm)
	}
	check()
}

// replayFromStart drops the partition's producer-state checkpoint and
// transaction keys and reopens, so that Open rebuilds them from the log.
func replayFromStart(t *testing.T, g *gateway, topic string) {
	t.Helper()
	p, err := g.r.mu.partition(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	g.r.Close()
	g.r = nil
	ops, err := txnstate.Keys(g.store, p.log)
	if err != nil {
		t.Fatal(err)
	}
	prods, err := (&stateStore{store: g.store}).producerKeys(p.log)
	if err != nil {
		t.Fatal(err)
	}
	ops = append(append(ops, prods...), storage.MetaOp{Key: idKey(prefixCheckpoint, uint64(p.log)), Delete: true})
	if err := g.store.ApplyMeta(ops...); err != nil {
		t.Fatal(err)
	}
	g.store.Close()
	g.store = nil
	g.open()
}

func equalBatches(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
