package share

import (
	"testing"
)

// bigLog is fakeLog over a long partition of one-record batches of size
// bytes each, counting the bytes its reads return.
type bigLog struct {
	fakeLog
	records int64
	size    int
	read    *int
}

func (l bigLog) Bounds(string, int32) (int64, int64, error) { return 0, l.records, nil }

func (l bigLog) Read(_ string, _ int32, offset int64, maxBytes int, _ Wire) ([][]byte, error) {
	var out [][]byte
	for o, n := offset, 0; o < l.records && (n == 0 || n+l.size <= maxBytes); o++ {
		b := make([]byte, l.size)
		copy(b, batchHeader(o, 0, false))
		out = append(out, b)
		n += l.size
		*l.read += l.size
	}
	return out, nil
}

// An acquisition reads about what it can take, not fetch.max.bytes: a
// share fetch of 10 records from a partition of 100,000 1 KiB records,
// with a 50 MiB MaxBytes, reads one first chunk; one of 2,000 records
// reads on in growing chunks until it covers them.
func TestAcquisitionReadsWhatItCanTake(t *testing.T) {
	read := 0
	c := &Coordinator{log: bigLog{records: 100000, size: 1024, read: &read}}
	rd, err := c.readSpans(tp0, 0, 9, 50<<20, false, nil)
	if err != nil || len(rd.spans) == 0 || rd.spans[0].first != 0 {
		t.Fatalf("read: %v, %d spans", err, len(rd.spans))
	}
	if read > firstReadChunk {
		t.Fatalf("10 records read %d bytes, want at most %d", read, firstReadChunk)
	}
	read = 0
	rd, err = c.readSpans(tp0, 0, 1999, 50<<20, false, nil)
	if err != nil || rd.spans[len(rd.spans)-1].last < 1999 {
		t.Fatalf("read: %v, up to %d, want 1999", err, rd.spans[len(rd.spans)-1].last)
	}
	if read > 4*2000*1024 {
		t.Fatalf("2000 records read %d bytes", read)
	}
}

// reachLocked counts the available records in flight and the records
// past the window's end, within the in-flight window bound.
func TestReachLocked(t *testing.T) {
	p := newPartition(10)
	p.recs = []rec{{state: acquired}, {state: available}, {state: acquired}, {state: available}}
	for _, c := range []struct {
		from     int64
		n, locks int
		want     int64
	}{
		{11, 1, 100, 11}, // the first available record
		{11, 2, 100, 13}, // the second, past an acquired one
		{11, 4, 100, 15}, // two past the end (14)
		{11, 50, 20, 29}, // the window bound: start+locks-1
		{14, 3, 100, 16}, // from the end on
	} {
		if got := p.reachLocked(c.from, c.n, c.locks); got != c.want {
			t.Errorf("reach from %d of %d (locks %d) = %d, want %d", c.from, c.n, c.locks, got, c.want)
		}
	}
}

// TestBatchesInOneBatchUncopied checks that an acquisition answers the
// read batches holding an acquired offset, in order, only those; that
// without a Wire one batch is answered as read (no copy), capped so that
// nothing appends into the read buffer, and several are concatenated;
// and that with one the batches are marked, not copied.
func TestBatchesInOneBatchUncopied(t *testing.T) {
	buf := []byte("aaaa|bbbb|cccc")
	batches := [][]byte{buf[0:4], buf[5:9], buf[10:14]}
	spans := []batchSpan{{first: 0, last: 9}, {first: 10, last: 19}, {first: 20, last: 29}}

	held, n := batchesIn(batches, spans, []acquiredRange{{first: 12, last: 15}})
	one := recordsOf(nil, held, n)
	if string(one) != "bbbb" || &one[0] != &buf[5] || cap(one) != len(one) {
		t.Fatalf("one batch: %q (cap %d), want the read's bbbb, capped", one, cap(one))
	}
	held, n = batchesIn(batches, spans, []acquiredRange{{first: 5, last: 5}, {first: 25, last: 29}})
	if two := recordsOf(nil, held, n); string(two) != "aaaacccc" || n != 8 {
		t.Fatalf("two batches: %q (%d bytes), want aaaacccc", two, n)
	}
	var w markWire
	if m := recordsOf(&w, held, n); string(m) != "marker" || len(w.marked) != 2 || &w.marked[1][0] != &buf[10] || w.size != 8 {
		t.Fatalf("marked: %q, %d batches, %d bytes", m, len(w.marked), w.size)
	}
	held, n = batchesIn(batches, spans, []acquiredRange{{first: 40, last: 41}})
	if none := recordsOf(&w, held, n); none == nil || len(none) != 0 {
		t.Fatalf("no batch: %q, want empty, not null", none)
	}
}

// markWire is a Wire that keeps what it marks.
type markWire struct {
	marked [][]byte
	size   int
}

func (w *markWire) MarkRead(batches [][]byte, size int) []byte {
	w.marked, w.size = batches, size
	return []byte("marker")
}
