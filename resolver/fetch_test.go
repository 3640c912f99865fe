package resolver

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/kgateway/kgateway/storage"
)

// TestProduceFetchRoundTrip: dense offsets (D3), whole batches back with
// their base offsets rewritten, a fetch inside a batch returns that batch.
func TestProduceFetchRoundTrip(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	sizes := []int{3, 1, 5, 2}
	var sent [][]byte
	next := Offset(0)
	for _, n := range sizes {
		b := plain(n, 100).encode()
		res := g.produce("t", 0, b)
		if res.BaseOffset != next || res.LogAppendTime != -1 || res.LogStart != 0 || res.Duplicate {
			t.Fatalf("produce: %+v, want base %d", res, next)
		}
		sent = append(sent, b)
		next += Offset(n)
	}
	all := g.fetch("t", 0, 0, 1<<20)
	if len(all.Batches) != len(sizes) || all.HighWatermark != next || all.LastStable != next || all.LogStart != 0 {
		t.Fatalf("fetch all: %d batches, hwm %d", len(all.Batches), all.HighWatermark)
	}
	off := Offset(0)
	for i, b := range all.Batches {
		if baseOffsetOf(b) != off {
			t.Fatalf("batch %d base %d, want %d", i, baseOffsetOf(b), off)
		}
		if _, _, err := parseBatch(b); err != nil {
			t.Fatalf("served batch %d invalid: %v", i, err)
		}
		if string(b[12:]) == string(sent[i][12:]) {
			t.Fatalf("batch %d: leader epoch not stamped", i)
		}
		if string(b[16:]) != string(sent[i][16:]) {
			t.Fatalf("batch %d bytes changed beyond offset and leader epoch", i)
		}
		off += Offset(sizes[i])
	}
	// Offsets 0..2 are the first batch; 4..8 the third.
	for _, tc := range []struct {
		off       Offset
		wantFirst Offset
		wantN     int
	}{{0, 0, 4}, {1, 0, 4}, {2, 0, 4}, {3, 3, 3}, {4, 4, 2}, {6, 4, 2}, {8, 4, 2}, {9, 9, 1}, {10, 9, 1}} {
		res := g.fetch("t", 0, tc.off, 1<<20)
		if len(res.Batches) != tc.wantN || baseOffsetOf(res.Batches[0]) != tc.wantFirst {
			t.Fatalf("fetch @%d: %d batches from %d, want %d from %d", tc.off, len(res.Batches), baseOffsetOf(res.Batches[0]), tc.wantN, tc.wantFirst)
		}
	}
}

// TestFetchSnapshotRules covers the log start check, the empty read at the end and the fresh end check (and the empty read at the end and no cached EOF through Watch in
// TestWatch).
func TestFetchSnapshotRules(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	for range 4 {
		g.produce("t", 0, plain(2, 1).encode())
	}
	log := mustTopic(t, g.r, "t").parts[0].log
	if err := g.store.SoftTrim(log, 4); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		off     Offset
		want    error
		batches int
	}{
		{"the log start check below log start", 3, ErrOffsetOutOfRange, 0},
		{"the log start check far below", 0, ErrOffsetOutOfRange, 0},
		{"at log start", 4, nil, 2},
		{"the empty read at the end at end", 8, nil, 0},
		{"the fresh end check past end", 9, ErrOffsetOutOfRange, 0},
		{"the fresh end check far past end", 1000, ErrOffsetOutOfRange, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := g.r.Fetch("t", 0, tc.off, 1<<20, true, ReadUncommitted)
			if !isErr(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if len(res.Batches) != tc.batches {
				t.Fatalf("%d batches, want %d", len(res.Batches), tc.batches)
			}
			if res.HighWatermark != 8 || res.LastStable != 8 || res.LogStart != 4 {
				t.Fatalf("bounds %d/%d/%d", res.HighWatermark, res.LastStable, res.LogStart)
			}
		})
	}
	// No cached EOF: the end is never cached: after one more append, 8 reads and 9 is
	// still past the end only until then.
	g.produce("t", 0, plain(2, 1).encode())
	if res := g.fetch("t", 0, 8, 1<<20); len(res.Batches) != 1 || res.HighWatermark != 10 {
		t.Fatalf("after append: %+v", res)
	}
	if res := g.fetch("t", 0, 9, 1<<20); len(res.Batches) != 1 {
		t.Fatalf("9 after append: %d batches", len(res.Batches))
	}
	if _, err := g.r.Fetch("t", 1, 0, 100, true, ReadUncommitted); !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("bad partition: %v", err)
	}
	if _, err := g.r.Fetch("nope", 0, 0, 100, true, ReadUncommitted); !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("bad topic: %v", err)
	}
}

// TestFetchLimits: maxBytes with KIP-74 minOne.
func TestFetchLimits(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	var size int
	for range 5 {
		b := plain(1, 1)
		b.value = make([]byte, 200)
		enc := b.encode()
		size = len(enc)
		g.produce("t", 0, enc)
	}
	for _, tc := range []struct {
		name     string
		maxBytes int
		minOne   bool
		want     int
	}{
		{"one byte minOne", 1, true, 1},
		{"zero minOne", 0, true, 1},
		{"one byte no minOne", 1, false, 0},
		{"exactly two", 2 * size, true, 2},
		{"two and a bit", 2*size + size/2, false, 2},
		{"all", 100 * size, true, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := g.r.Fetch("t", 0, 0, tc.maxBytes, tc.minOne, ReadUncommitted)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Batches) != tc.want || res.Bytes != tc.want*size {
				t.Fatalf("%d batches, %d bytes; want %d", len(res.Batches), res.Bytes, tc.want)
			}
		})
	}
}

// TestFetchAcrossLedgers: a small segment.bytes rolls ledgers; reads cross
// them and pins do not get in the way of a hard trim.
func TestFetchAcrossLedgers(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, map[string]string{"segment.bytes": "300"})
	for range 10 {
		b := plain(2, 1)
		b.value = make([]byte, 50)
		g.produce("t", 0, b.encode())
	}
	log := mustTopic(t, g.r, "t").parts[0].log
	info, err := g.store.Info(log)
	if err != nil || len(info.Ledgers) < 3 {
		t.Fatalf("ledgers: %d, %v", len(info.Ledgers), err)
	}
	res := g.fetch("t", 0, 3, 1<<20)
	if len(res.Batches) != 9 || baseOffsetOf(res.Batches[0]) != 2 {
		t.Fatalf("cross-ledger fetch: %d batches", len(res.Batches))
	}
	if err := g.store.SoftTrim(log, 10); err != nil {
		t.Fatal(err)
	}
	if err := g.store.HardTrim(log, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := g.r.Fetch("t", 0, 3, 1<<20, true, ReadUncommitted); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("trimmed: %v", err)
	}
	res = g.fetch("t", 0, 10, 1<<20)
	if len(res.Batches) != 5 || res.LogStart != 10 {
		t.Fatalf("after trim: %d batches, start %d", len(res.Batches), res.LogStart)
	}
}

// TestProduceRejects: corrupt, invalid or oversized batches, and more than
// one batch, are refused and nothing is appended.
func TestProduceRejects(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, map[string]string{"max.message.bytes": "500"})
	good := plain(2, 1).encode()
	flip := func(b []byte, i int) []byte {
		c := append([]byte(nil), b...)
		c[i] ^= 0x40
		return c
	}
	big := plain(1, 1)
	big.value = make([]byte, 600)
	v1 := plain(1, 1)
	v1.magic = 1
	badCodec := plain(1, 1)
	badCodec.codec = 5
	countMismatch := plain(2, 1).encode()
	binary.BigEndian.PutUint32(countMismatch[57:], 3)
	countMismatch = recrc(countMismatch)
	zero := plain(1, 1).encode()
	binary.BigEndian.PutUint32(zero[57:], 0)
	binary.BigEndian.PutUint32(zero[23:], 0xffffffff)
	zero = recrc(zero)
	trailing := append(plain(1, 1).encode(), 0, 0, 0)
	long := plain(1, 1).encode()
	binary.BigEndian.PutUint32(long[8:], uint32(len(long)))
	txn := plain(1, 1).encode()
	txn[22] |= 0x10
	txn = recrc(txn)
	control := idem(1, 0, 0, 1).encode()
	control[22] |= 0x30
	control = recrc(control)

	for _, tc := range []struct {
		name string
		blob []byte
		want error
	}{
		{"crc: flipped record byte", flip(good, len(good)-2), ErrCorruptBatch},
		{"crc: flipped attributes", flip(good, 22), ErrCorruptBatch},
		{"crc: flipped max timestamp", flip(good, 40), ErrCorruptBatch},
		{"second of two batches corrupt", append(append([]byte(nil), good...), flip(good, len(good)-1)...), ErrCorruptBatch},
		{"two batches", append(append([]byte(nil), good...), good...), ErrInvalidRecord},
		{"magic 1", v1.encode(), ErrUnsupportedMagic},
		{"magic 7", flip(good, 16), ErrCorruptBatch},
		{"codec 5", badCodec.encode(), ErrCorruptBatch},
		{"count mismatch", countMismatch, ErrInvalidRecord},
		{"zero records", zero, ErrInvalidRecord},
		{"trailing garbage", trailing, ErrCorruptBatch},
		{"length past end", long, ErrCorruptBatch},
		{"short", good[:40], ErrCorruptBatch},
		{"empty", nil, ErrInvalidRecord},
		{"transactional without producer id", txn, ErrInvalidRecord},
		{"control (control batches by WriteTxnMarker only)", control, ErrInvalidRecord},
		{"too large", big.encode(), ErrMessageTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := g.r.Produce("t", 0, tc.blob); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if _, hwm, _, _ := g.r.Bounds("t", 0); hwm != 0 {
				t.Fatalf("appended: hwm %d", hwm)
			}
		})
	}
	// A good batch after all that is appended whole, and the caller's
	// buffer is not modified.
	res := g.produce("t", 0, good)
	if res.BaseOffset != 0 {
		t.Fatalf("base %d", res.BaseOffset)
	}
	f := g.fetch("t", 0, 0, 1<<20)
	if len(f.Batches) != 1 || f.HighWatermark != 2 {
		t.Fatalf("%d batches, hwm %d", len(f.Batches), f.HighWatermark)
	}
	if baseOffsetOf(good) != 0 {
		t.Fatal("caller's buffer was rewritten")
	}
}

func recrc(b []byte) []byte {
	binary.BigEndian.PutUint32(b[crcOff:], crc32c(b[attrsOff:]))
	return b
}

// TestLogAppendTime: the batch max timestamp becomes the append time, the
// timestamp-type bit is set and the CRC stays valid.
func TestLogAppendTime(t *testing.T) {
	now := fixedClock(1_700_000_000_123)
	g := newGateway(t, Config{Ledger: ledgerNow(now)})
	g.create("lat", 1, map[string]string{"message.timestamp.type": "LogAppendTime"})
	g.create("ct", 1, nil)
	res := g.produce("lat", 0, plain(3, 5).encode())
	if res.LogAppendTime != 1_700_000_000_123 {
		t.Fatalf("LogAppendTime %d", res.LogAppendTime)
	}
	b := g.fetch("lat", 0, 0, 1<<20).Batches[0]
	h, _, err := parseBatch(b)
	if err != nil {
		t.Fatalf("stamped batch invalid: %v", err)
	}
	if h.MaxTimestamp != 1_700_000_000_123 || h.Attributes&logAppendTimeBit == 0 || h.BaseTimestamp != 5 {
		t.Fatalf("header %+v", h)
	}
	if off, ts, _ := g.r.ListOffset("lat", 0, 1_700_000_000_000); off != 0 || ts != 1_700_000_000_123 {
		t.Fatalf("time index not stamped: %d %d", off, ts)
	}
	g.produce("ct", 0, plain(3, 5).encode())
	h, _, _ = parseBatch(g.fetch("ct", 0, 0, 1<<20).Batches[0])
	if h.MaxTimestamp != 7 || h.Attributes&logAppendTimeBit != 0 {
		t.Fatalf("CreateTime header %+v", h)
	}
}

// TestCorruptStoredEntryFailsClosed: an entry that is not a valid batch is
// never served (read flow step 5), whether the storage frame is intact
// (bytes written behind the resolver's back) or the file is damaged.
func TestCorruptStoredEntryFailsClosed(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	g.produce("t", 0, plain(2, 1).encode())
	log := mustTopic(t, g.r, "t").parts[0].log

	// A well-framed entry whose payload is a batch with a bad CRC.
	bad := plain(1, 1).encode()
	bad[len(bad)-1] ^= 1
	if _, err := g.store.Append(log, 1, bad, storage.AppendOptions{Stamp: func(p []byte, o storage.Offset) int64 {
		setBaseOffset(p, o)
		return 1
	}}); err != nil {
		t.Fatal(err)
	}
	// One whose index record count disagrees with the batch.
	if _, err := g.store.Append(log, 2, plain(1, 1).encode(), storage.AppendOptions{Stamp: func(p []byte, o storage.Offset) int64 {
		setBaseOffset(p, o)
		return 1
	}}); err != nil {
		t.Fatal(err)
	}
	if res := g.fetch("t", 0, 0, 1); len(res.Batches) != 1 {
		t.Fatalf("valid first batch: %d", len(res.Batches))
	}
	for _, off := range []Offset{0, 2, 3} {
		res, err := g.r.Fetch("t", 0, off, 1<<20, true, ReadUncommitted)
		if !errors.Is(err, ErrStorage) || len(res.Batches) != 0 {
			t.Fatalf("fetch @%d: %d batches, %v", off, len(res.Batches), err)
		}
		if res.HighWatermark != 5 {
			t.Fatalf("bounds not set on error: %+v", res)
		}
	}
}

// TestCorruptSegmentFileFailsClosed damages a stored batch on disk.
func TestCorruptSegmentFileFailsClosed(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	for range 3 {
		g.produce("t", 0, plain(2, 1).encode())
	}
	log := mustTopic(t, g.r, "t").parts[0].log
	h, err := g.store.Floor(log, 2)
	if err != nil {
		t.Fatal(err)
	}
	g.close()
	corruptFile(t, g.dir, storage.SegmentFileName(log, h.Ledger), h.Pos+28+int64(h.Size)-1)
	g.open()
	if res := g.fetch("t", 0, 0, 1); len(res.Batches) != 1 {
		t.Fatalf("entry before the damage: %d", len(res.Batches))
	}
	res, err := g.r.Fetch("t", 0, 2, 1<<20, true, ReadUncommitted)
	if !errors.Is(err, ErrStorage) || len(res.Batches) != 0 {
		t.Fatalf("damaged entry: %d batches, %v", len(res.Batches), err)
	}
}

func TestValidateStored(t *testing.T) {
	b := plain(2, 1).encode()
	setBaseOffset(b, 7)
	ok := storage.Entry{EntryHeader: storage.EntryHeader{Offset: 7, Records: 2}, Payload: b}
	if err := ValidateStored(ok); err != nil {
		t.Fatal(err)
	}
	for name, e := range map[string]storage.Entry{
		"offset":   {EntryHeader: storage.EntryHeader{Offset: 8, Records: 2}, Payload: b},
		"records":  {EntryHeader: storage.EntryHeader{Offset: 7, Records: 1}, Payload: b},
		"trailing": {EntryHeader: storage.EntryHeader{Offset: 7, Records: 2}, Payload: append(append([]byte(nil), b...), b...)},
		"short":    {EntryHeader: storage.EntryHeader{Offset: 7, Records: 2}, Payload: b[:30]},
	} {
		if err := ValidateStored(e); !errors.Is(err, ErrCorruptBatch) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
